import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorTypeFor, type OpenAiErrorBody } from '@conveyor/openai';

/** OpenAI's error body for a status, with no field to name. */
export function openAiErrorBody(status: number, message: string, code: string | null): OpenAiErrorBody {
  return { error: { message, type: errorTypeFor(status), param: null, code } };
}

/** A whole HTTP/1.1 response carrying an OpenAI error, for answers written before any route runs. */
export function rawErrorResponse(status: number, message: string, code: string | null): string {
  const body = JSON.stringify(openAiErrorBody(status, message, code));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
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
 * Answers on the socket itself with an OpenAI error, then closes it: the request cannot go on
 * (it is malformed, too large, or stalled), and nothing after it on the connection can be trusted.
 */
export function answerAndClose(socket: Duplex, status: number, message: string, code: string | null): void {
  if (socket.destroyed) return;
  if (!socket.writable || responseStarted(socket)) {
    socket.destroy();
    return;
  }
  socket.end(rawErrorResponse(status, message, code), () => socket.destroy());
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}
