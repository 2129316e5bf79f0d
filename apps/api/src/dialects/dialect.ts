import type { OpenAiHttpError } from '../errors/openai-http.error.js';

/** An error as one API shows it to its clients: the status, the body and the headers it is answered with. */
export interface ShapedError {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/**
 * How one API surface speaks on the wire. Every route declares the dialect it speaks (`@Speaks`), and
 * whatever refuses a request on that route (a hook before the route runs, the route itself, a guard)
 * answers in that dialect's shape. A surface that generates declares more (its body, id prefix,
 * stream framing and replies: `GenerationDialect`).
 */
export interface Dialect {
  /** The surface's name, for logs and tests: `openai`, `anthropic-messages`. */
  readonly name: string;
  /** The error its clients are shown for one the platform raised (the neutral error), whatever raised it. */
  error(error: OpenAiHttpError): ShapedError;
}
