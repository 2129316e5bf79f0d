/**
 * When files expire (seconds since the epoch), for the files given an expiry: a batch's output and error
 * files (`output_expires_after`) and uploads (`expires_after`). An expired file answers 404 at once; the
 * sweeper removes it from the store soon after, on whichever replica comes first.
 */
export abstract class FileExpiries {
  /** Sets when each file expires, unless it has an expiry already: set again (a replica died first), the first stands. */
  abstract expire(ids: readonly string[], at: number): Promise<void>;
  /** When each file expires, in order; null: never. */
  abstract expiresAt(ids: readonly string[]): Promise<(number | null)[]>;
  /** Up to `count` files expired by `now`, soonest first. */
  abstract due(now: number, count: number): Promise<string[]>;
  /** The file is gone: nothing is left to remove. */
  abstract forget(id: string): Promise<void>;
}
