import { connect } from 'node:net';

/** What came back on a raw connection, and how long the server kept it open. */
export interface RawAnswer {
  /** 0 when nothing came back. */
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from connecting until the server closed the connection; null if it never did. */
  closedAfterMs: number | null;
}

/**
 * Writes `parts` to a fresh connection to 127.0.0.1:`port`, `gapMs` apart, and never ends its side:
 * a request that is cut short stalls, as a client that stops sending does. Resolves when the server
 * closes the connection, or after `waitMs` (then `closedAfterMs` is null).
 */
export function rawExchange(
  port: number,
  parts: Array<string | Buffer>,
  options: { gapMs?: number; waitMs?: number } = {},
): Promise<RawAnswer> {
  const { gapMs = 0, waitMs = 10_000 } = options;
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({
        ...parseResponse(Buffer.concat(received).toString('utf8')),
        closedAfterMs: closed ? Date.now() - started : null,
      });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('close', () => finish(true));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? undefined : reject(err)));
    socket.once('connect', async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0 && gapMs) await new Promise((r) => setTimeout(r, gapMs));
        if (socket.destroyed) return;
        socket.write(part);
      }
    });
  });
}

function parseResponse(text: string): Pick<RawAnswer, 'status' | 'headers' | 'body'> {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, body: text };
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(end + 4) };
}

/** A whole request, closing the connection after its answer. */
export function rawRequest(head: string, body = ''): string {
  const length = body ? `Content-Length: ${Buffer.byteLength(body)}\r\n` : '';
  return `${head}\r\n${length}Connection: close\r\n\r\n${body}`;
}
