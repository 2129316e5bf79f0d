/**
 * Leases on background responses: the replica that follows one (reads its reply and stores its end)
 * holds its lease and renews it; a lease that lapses means its follower is gone (killed, crashed), and
 * another replica may take the response over. A holder is one replica's name.
 */
export abstract class ResponseLeases {
  /** Takes the lease if nobody holds it; true when taken. */
  abstract take(responseId: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Extends the leases `holder` still holds among `responseIds`; returns those it no longer holds. */
  abstract renew(responseIds: readonly string[], holder: string, ttlMs: number): Promise<string[]>;
  /** Gives up the lease if `holder` holds it, so another replica may take the response over at once. */
  abstract release(responseId: string, holder: string): Promise<void>;
}
