import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '@conveyor/openai';
import { OPENAI } from '../dialects/openai.dialect.js';
import { dialectOf } from '../dialects/speaks.decorator.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { answerAndClose } from './raw-error.js';

interface Refusal {
  status: number;
  message: string;
  code: ErrorCode | null;
}

/** What Node's HTTP parser (and its own request timer) refuses a connection for, as the client is told. */
export function clientErrorRefusal(errorCode: string, maxHeaderBytes: number): Refusal {
  switch (errorCode) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        message: `The request line and headers exceed ${Math.round(maxHeaderBytes / 1024)} KB (a URL that long is refused too).`,
        code: ErrorCode.headersTooLarge,
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'The chunk extensions are too large.', code: ErrorCode.requestTooLarge };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        message: 'The request did not arrive within the time allowed; send it again.',
        code: ErrorCode.requestTimeout,
      };
    default:
      return { status: 400, message: 'The request is not well-formed HTTP.', code: ErrorCode.malformedRequest };
  }
}

/**
 * Fastify's `clientErrorHandler`: Node's `clientError` (a malformed request line, headers over Node's
 * limit, a request that did not arrive in time) answered in OpenAI's shape instead of Fastify's: no
 * route, so no dialect, is known of a request Node could not parse.
 */
export function clientErrorHandler(maxHeaderBytes: number): (error: ConnectionError, socket: Socket) => void {
  return (error, socket) => {
    // A reset connection has no one to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const refusal = clientErrorRefusal(error.code, maxHeaderBytes);
    answerAndClose(socket, OPENAI.error(OpenAiHttpError.refusal(refusal.status, refusal.message, refusal.code)));
  };
}

/** What Fastify's router refuses a URL for before any hook runs, as the client is told. */
export function frameworkErrorRefusal(error: Pick<FastifyError, 'code' | 'statusCode'>): Refusal {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return { status: 400, message: 'The URL is not valid (a malformed %-escape?).', code: ErrorCode.invalidUrl };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { status: 414, message: 'A segment of the URL is too long.', code: ErrorCode.urlTooLong };
    default: {
      const status = error.statusCode ?? 500;
      return status < 500
        ? { status, message: 'The request could not be routed.', code: ErrorCode.invalidUrl }
        : { status, message: 'The server had an error while routing your request.', code: null };
    }
  }
}

/** Fastify's `frameworkErrors`: the router's own 400 and 414, in the shape of the request's dialect (OpenAI's, as no route matched). */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const refusal = frameworkErrorRefusal(error);
  const { status, body, headers } = dialectOf(request).error(
    OpenAiHttpError.refusal(refusal.status, refusal.message, refusal.code),
  );
  void reply.code(status).headers(headers).send(body);
}
