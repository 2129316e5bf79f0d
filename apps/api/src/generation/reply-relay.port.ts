import type { ReplySubscription } from './reply-subscription.js';

/**
 * The reply relay: follows the reply streams of the requests this replica serves, and ends them
 * early when it must. Services depend on this port; the Redis reader is the adapter behind it.
 */
export abstract class ReplyRelay {
  /** Follows the reply stream at `key` from its start; a newer subscription to the same key ends an older one. */
  abstract subscribe(key: string): ReplySubscription;
  /** Ends the reader of `key`, if this process has one, with `error`. */
  abstract fail(key: string, error: unknown): void;
  /** Ends every open reply with `error` (shutting down). */
  abstract failAll(error: unknown): void;
  /** Replies this replica is following now. */
  abstract get open(): number;
}
