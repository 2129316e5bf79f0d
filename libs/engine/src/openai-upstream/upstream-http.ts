import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { traceHeaders } from '@conveyor/telemetry';

/** How many bytes of an error answer are read: enough for any message, never a whole runaway body. */
const ERROR_BODY_LIMIT = 64 * 1024;

export interface UpstreamAnswer {
  status: number;
  /** The answer's body, chunk by chunk; fails if the connection breaks. */
  body: IncomingMessage;
}

/**
 * POSTs JSON and resolves with the answer as soon as its headers arrive, so a streamed body can be read
 * as it comes. node:http rather than fetch: the connection policy must be chosen per upstream (llama.cpp's
 * server closes a connection after a streamed reply, and a kept-alive socket it closed fails the next
 * request sent on it), and a silent connection must time out, which fetch offers neither of.
 */
export class UpstreamHttp {
  private readonly agent: HttpAgent;
  private readonly idleTimeoutMs: number;

  constructor(
    private readonly base: URL,
    options: { keepAlive: boolean; idleTimeoutMs: number },
  ) {
    const Agent = base.protocol === 'https:' ? HttpsAgent : HttpAgent;
    this.agent = new Agent({ keepAlive: options.keepAlive });
    this.idleTimeoutMs = options.idleTimeoutMs;
  }

  post(path: string, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<UpstreamAnswer> {
    const url = new URL(this.base.pathname.replace(/\/+$/, '') + path, this.base);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, {
        method: 'POST',
        agent: this.agent,
        signal,
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream, application/json',
          'content-length': String(Buffer.byteLength(body)),
          // The generation span's traceparent: an upstream that traces (vLLM, llama-server) joins the trace.
          ...traceHeaders(),
          ...headers,
        },
      });
      // No byte for this long, headers or body: the upstream is stuck, and another attempt may do better.
      req.setTimeout(this.idleTimeoutMs, () =>
        req.destroy(new Error(`no answer from the upstream for ${this.idleTimeoutMs / 1000} s`)),
      );
      req.once('response', (res) => resolve({ status: res.statusCode ?? 0, body: res }));
      req.once('error', reject);
      req.end(body);
    });
  }

  get(path: string, signal?: AbortSignal, headers: Record<string, string> = {}): Promise<UpstreamAnswer> {
    const url = new URL(path, this.base);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, { method: 'GET', agent: this.agent, signal, headers });
      req.setTimeout(this.idleTimeoutMs, () => req.destroy(new Error('no answer')));
      req.once('response', (res) => resolve({ status: res.statusCode ?? 0, body: res }));
      req.once('error', reject);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Reads an (error) answer's body as text, up to a limit. */
export async function readText(body: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    chunks.push(buffer);
    size += buffer.length;
    if (size >= ERROR_BODY_LIMIT) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, ERROR_BODY_LIMIT);
}

/** Parses JSON text, or keeps the text when it is not JSON. */
export function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
