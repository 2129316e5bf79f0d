import type { ReplyEvent } from '@conveyor/queue';
import type { ReplySink } from './reply-sink.js';

/** Where one reply's events go: the inbox of the API replica relaying it. */
export interface ReplyAddress {
  inbox: string;
  requestId: string;
}

/**
 * The replies clients are reading as they come: one sink per attempt of a reply, and what earlier
 * attempts wrote. Services depend on this port; the worker's Redis reply outbox is the adapter.
 */
export abstract class ReplyStreams {
  /** Every event of the reply written so far, in order ([] when none); `since`: when its job was queued. */
  abstract history(address: ReplyAddress, since: number): Promise<ReplyEvent[]>;
  /** The sink of attempt `attempt`; `earlier`: what earlier attempts wrote (its history when it started). */
  abstract open(address: ReplyAddress, attempt: number, earlier: readonly ReplyEvent[]): ReplySink;
  /** An engine round ended: every reply's output of that round is in its sink. */
  abstract roundEnded(): void;
}
