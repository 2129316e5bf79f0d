/**
 * Which file store the API replicas on one Redis prefix share: a record held by the live replicas that
 * use it. Each holder renews its hold; the record goes when the last holder releases it or lets it
 * lapse (a replica that crashed), so a later stack with another store is refused only while a replica
 * of the old one is alive.
 */
export abstract class StoreIdentities {
  /**
   * Holds the record for `identity` on behalf of `holder` for `ttlMs` (renewing a hold it had), unless
   * live replicas hold another identity; returns the identity recorded now.
   */
  abstract hold(identity: string, holder: string, ttlMs: number): Promise<string>;
  /** Gives up `holder`'s hold; the record goes with its last holder. */
  abstract release(holder: string): Promise<void>;
}
