/** A place in a deployment's queue, or how many jobs hold the places when there is none. */
export type Admission = { admitted: true } | { admitted: false; queued: number };

/**
 * Places in the deployments' queues: the depth limit every API replica shares. Reserving checks and
 * takes a place in one step, so requests that arrive together cannot all see room only one of them has.
 */
export abstract class QueueAdmission {
  /** Takes a place for `requestId` in `deployment`'s queue unless `limit` jobs wait or are about to. */
  abstract reserve(deployment: string, requestId: string, limit: number): Promise<Admission>;
  /** Gives a place back once its job is in the queue (where it counts) or was never queued. */
  abstract release(deployment: string, requestId: string): Promise<void>;
}
