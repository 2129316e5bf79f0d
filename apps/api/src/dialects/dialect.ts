import type { OpenAiHttpError } from '../errors/openai-http.error.js';
import type { BatchEndpoint } from '../contracts/batch-endpoint.js';
import type { SseFraming } from '../generation/reply-stream.js';

/** An error as one API shows it to its clients: the status, the body and the headers it is answered with. */
export interface ShapedError {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/**
 * How one API surface speaks on the wire. Every route declares the dialect it speaks (`@Speaks`), and
 * whatever refuses a request on that route (a hook before the route runs, the route itself, a guard)
 * answers in that dialect's shape. A surface that takes a body declares more (`SurfaceDialect`).
 */
export interface Dialect {
  /** The surface's name, for logs and tests: `openai`, `anthropic-messages`. */
  readonly name: string;
  /** The error its clients are shown for one the platform raised (the neutral error), whatever raised it. */
  error(error: OpenAiHttpError): ShapedError;
}

/**
 * A surface that takes requests in a body a batch may carry too (chat, legacy completions, embeddings,
 * Responses, Messages): its wire, its body's validation and job (`parse`), the prefix of its reply
 * ids, and its reply as a whole (`toResponse`), the same for a route's reply and a batch line's.
 */
export interface SurfaceDialect extends Dialect, BatchEndpoint {}

/** A surface whose replies also stream: how its Server-Sent Events are framed. */
export interface StreamingDialect<Chunk> extends SurfaceDialect {
  readonly framing: SseFraming<Chunk>;
}
