/**
 * A place in a deployment's queue, or how many requests hold the places when there is none; with `held`
 * and `share`, the queue has free places but they are held for other API keys, this one holding `held`
 * places against a weighted share of `share`.
 */
export type Admission = { admitted: true } | { admitted: false; queued: number; held?: number; share?: number };

/** The API key asking for a place, for weighted shares of the places between keys. */
export interface Asker {
  /** The key's name (a request's caller). */
  name: string;
  /** Its weight against the other keys asking for places in the same queue. */
  weight: number;
}

/**
 * Places in the deployments' queues: the depth limit every API replica shares. A place is held from the
 * moment it is reserved until a worker takes the request's job (the worker gives it back) or the job is
 * taken back before that. Reserving checks and takes a place in one step, so requests that arrive
 * together cannot all see room only one of them has; what it costs does not depend on how many workers
 * serve the deployment. With an asker, the places are shared by weight between the keys asking for them:
 * once the free places are what other keys are short of their shares, a key at or over its share is refused.
 */
export abstract class QueueAdmission {
  /** Takes a place for `requestId` in `deployment`'s queue unless `limit` requests hold one (or the rest are others'). */
  abstract reserve(deployment: string, requestId: string, limit: number, asker?: Asker): Promise<Admission>;
  /** The request's job is in a queue now: its place is held until a worker takes it, not only a moment. */
  abstract queued(deployment: string, requestId: string): Promise<void>;
  /** Gives a place back: its job was never queued, or was taken back before any worker had it. */
  abstract release(deployment: string, requestId: string): Promise<void>;
}
