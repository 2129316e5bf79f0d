import type { QueueTier } from '@conveyor/queue';

/** The work one deployment has that no worker has finished, by where it is. */
export interface DeploymentWork {
  /** Requests waiting in the deployment's queue, whatever their service tier, or to be retried. */
  waiting: number;
  /** Batch lines queued in the deployment's queue (behind every service tier's requests). */
  batchQueued: number;
  /** Jobs in the deployment's per-worker queues, routed to the worker holding their prompt, not yet started. */
  routed: number;
  /** Jobs a worker is running, from the deployment's queue or a per-worker one. */
  running: number;
  /** Lines of running batches for the deployment that are still in their input file, not yet queued. */
  batchUnqueued: number;
  /**
   * Jobs waiting in the deployment's queue by band, first served to last: each service tier's requests,
   * then batch lines (retries waiting out their back-off are in `waiting` alone).
   */
  waitingByTier: Record<QueueTier | 'batch', number>;
}

/**
 * The work waiting for or held by each deployment's workers, read afresh: what autoscaling scales on.
 * Services depend on this port; the repository reading BullMQ's queues and the batch counts in Redis
 * implements it.
 */
export abstract class PendingWork {
  abstract of(deployments: readonly string[]): Promise<Map<string, DeploymentWork>>;
}
