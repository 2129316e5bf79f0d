import type { FinishReason, TokenUsage } from './chat-job.js';

/**
 * Events a worker appends to a request's reply stream, in order. `attempt`
 * fences retries: once a reader has seen attempt N start, it drops events of
 * earlier attempts, so a stalled worker's late chunks never interleave.
 * `seq` numbers the events of one attempt from 0, so a reader can tell a
 * repeated event from a new one.
 */
interface EventBase {
  attempt: number;
  seq: number;
}

export type ReplyEvent =
  /** `resumed`: this attempt continues the text earlier attempts already sent, it does not restart it. */
  | (EventBase & { type: 'start'; promptTokens: number; resumed: boolean })
  | (EventBase & { type: 'delta'; text: string })
  | (EventBase & { type: 'end'; finishReason: FinishReason; usage: TokenUsage })
  | (EventBase & { type: 'error'; status: number; code: string; message: string });

/** An event as the publisher hands it over, before it is numbered. */
export type UnnumberedReplyEvent = ReplyEvent extends infer E ? (E extends ReplyEvent ? Omit<E, 'seq'> : never) : never;

/** Stream entry field that holds the JSON-encoded event. */
export const REPLY_EVENT_FIELD = 'e';
