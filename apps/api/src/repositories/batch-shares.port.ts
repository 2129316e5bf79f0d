/** A batch asking for lines to queue, as the shares know it. */
export interface ShareRequest {
  batchId: string;
  /** Its API key's name and weight: a key's batches share one share. */
  owner: string;
  weight: number;
  /** Its lines queued or running now (the lines just granted to it this tick included). */
  inflight: number;
  /** Lines it would queue now; 0 only says it is still feeding, with `inflight` in flight. */
  wanted: number;
  /** Lines the deployment keeps in flight at once (twice its live sequences, at least BATCH_INFLIGHT). */
  capacity: number;
}

/**
 * Weighted fair shares of each deployment's batch lines in flight between API keys, agreed on in Redis
 * by every replica driving a batch. Services depend on this port; the repository implements it.
 */
export abstract class BatchShares {
  /** How many of the lines wanted the batch may queue for `deployment` now. */
  abstract grant(deployment: string, request: ShareRequest): Promise<number>;
  /** The batch feeds no more (ended, cancelled, expired): its lines no longer count in its key's share. */
  abstract forget(batchId: string, deployments: readonly string[]): Promise<void>;
}
