import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ShapedError } from '../dialects/dialect.js';

/** A whole HTTP/1.1 response carrying an error, for answers written on the socket itself. */
export function rawErrorResponse({ status, body, headers }: ShapedError): string {
  const json = JSON.stringify(body);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(json)}\r\n` +
    extra +
    'Connection: close\r\n\r\n' +
    json
  );
}

/**
 * Whether a response has begun on the socket. Node's http server keeps the response in flight as
 * the socket's `_httpMessage` (undocumented; its own client-error fallback reads it the same way):
 * once its headers are out, another status line would corrupt what the client reads.
 */
function responseStarted(socket: Duplex): boolean {
  const message: unknown = Reflect.get(socket, '_httpMessage');
  return typeof message === 'object' && message !== null && Reflect.get(message, 'headersSent') === true;
}

/** A client that stops reading cannot hold the socket open past this. */
const CLOSE_GRACE_MS = 1000;

/**
 * Answers on the socket itself with an error (in the shape of the dialect the request spoke, or OpenAI's
 * where nothing is known of it), then closes it: the request cannot go on (it is malformed, too large,
 * or stalled), and nothing after it on the connection can be trusted.
 */
export function answerAndClose(socket: Duplex, error: ShapedError): void {
  if (socket.destroyed) return;
  if (!socket.writable || responseStarted(socket)) {
    socket.destroy();
    return;
  }
  socket.end(rawErrorResponse(error), () => socket.destroy());
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}
