import type { FinishReason, TokenUsage } from './chat-job.js';

/**
 * Events a worker appends to a request's reply stream, in order. `attempt`
 * fences retries: once a reader has seen attempt N start, it drops events of
 * earlier attempts, so a stalled worker's late chunks never interleave.
 */
export type ReplyEvent =
  | { type: 'start'; attempt: number; promptTokens: number }
  | { type: 'delta'; attempt: number; text: string }
  | { type: 'end'; attempt: number; finishReason: FinishReason; usage: TokenUsage }
  | { type: 'error'; attempt: number; status: number; code: string; message: string };

/** Stream entry field that holds the JSON-encoded event. */
export const REPLY_EVENT_FIELD = 'e';
