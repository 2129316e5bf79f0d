/**
 * What a worker reads and holds in Redis to load on-demand models where they are wanted: the work
 * waiting in a deployment's queue, the workers serving it, and the one load of it under way in the fleet.
 */
export abstract class ModelDemand {
  /** Jobs in the deployment's queue that no worker has taken (any tier, batch lines, delayed retries). */
  abstract waiting(deployment: string): Promise<number>;
  /** Workers announced as serving the deployment now. */
  abstract liveWorkers(deployment: string): Promise<number>;
  /** Takes the deployment's load for `worker`, for `ttlMs` unless renewed; false where another worker loads it. */
  abstract claimLoad(deployment: string, worker: string, ttlMs: number): Promise<boolean>;
  /** Keeps a load claimed by `worker` for another `ttlMs`. */
  abstract renewLoad(deployment: string, worker: string, ttlMs: number): Promise<void>;
  /** The load is over (done or failed): another worker may load the deployment when it is wanted again. */
  abstract endLoad(deployment: string, worker: string): Promise<void>;
}
