import type { SentReply } from '@conveyor/queue';
import type { ReplySink } from './reply-sink.js';

/**
 * Where a worker writes the replies a client is waiting for: a reply stream per request, written
 * by one sink per job attempt, and what earlier attempts already sent. The Redis stream writer is
 * the adapter behind this port.
 */
export abstract class ReplyPublisherFactory {
  /** What the request's client has been sent so far, by the same rule the API relays with. */
  abstract replay(requestId: string): Promise<SentReply>;
  /** Appends one request attempt's events to its reply stream, in order. */
  abstract open(requestId: string, attempt: number): ReplySink;
}
