// What the upstream's failures become: the request's own fault, or one another attempt may get past.
import { EngineInputError } from '../core/generation-engine.js';
import { record, text } from './upstream-json.js';

/** A failure of the upstream or of reaching it: another attempt (on another worker, or later) may succeed. */
export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/**
 * Statuses that say the request itself is wrong, which no retry fixes: the client gets them as a 400.
 * Not among them: a key or model the operator set up wrong (401, 403, 404), and load (408, 409, 429).
 */
const NOT_THE_REQUEST = new Set([401, 403, 404, 408, 409, 429]);

/**
 * What an error answer (or an error event in the stream) from the upstream becomes: the request's
 * fault (a 4xx) is an EngineInputError with the upstream's message, code and param; anything else is
 * an UpstreamError, which the queue retries.
 */
export function upstreamFailure(status: number, body: unknown, upstream: string): Error {
  const outer = record(body) ?? {};
  const error = record(outer.error) ?? outer;
  const message =
    text(error.message) ?? (typeof body === 'string' && body ? body.slice(0, 500) : `HTTP status ${status}`);
  if (status >= 400 && status < 500 && !NOT_THE_REQUEST.has(status)) {
    const code =
      text(error.code) ??
      (text(error.type) === 'exceed_context_size_error' ? 'context_length_exceeded' : 'invalid_request');
    return new EngineInputError(message, code, text(error.param) ?? null);
  }
  return new UpstreamError(`${upstream} answered ${status}: ${message}`, status);
}
