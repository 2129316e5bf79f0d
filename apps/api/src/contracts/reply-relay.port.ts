import type { ReplySubscription } from './reply-subscription.js';

/**
 * The reply relay: follows the replies of the requests this replica serves, and ends them early
 * when it must. Services depend on this port; the Redis inbox reader is the adapter behind it.
 */
export abstract class ReplyRelay {
  /** This replica's name: a job carries it (`replyTo`), and workers send its reply's events to this replica. */
  abstract get replica(): string;
  /** Follows a new request's reply; subscribed before its job is queued, so no event comes before it. */
  abstract subscribe(requestId: string): ReplySubscription;
  /**
   * Follows a reply already under way, or finished (a client resuming it, here or on another replica):
   * everything it holds from the start, then its live events. `replica`: the one its job named;
   * `since`: when its job was queued.
   */
  abstract follow(requestId: string, replica: string, since: number): ReplySubscription;
  /** Ends this replica's reader of `requestId`, if it has one, with `error`. */
  abstract fail(requestId: string, error: unknown): void;
  /** Ends every open reply with `error` (shutting down). */
  abstract failAll(error: unknown): void;
  /** Replies this replica is following now. */
  abstract get open(): number;
}
