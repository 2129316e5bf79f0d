/**
 * The pending-work signal as the scaling routes answer it. `value` is what an autoscaler reads (KEDA's
 * metrics-api scaler, `valueLocation: value`); the other numbers say where the work is.
 */
export interface WorkBreakdown {
  /** Every job and batch line not finished: the sum of the numbers below. */
  value: number;
  /** Requests waiting in the deployment's queue, whatever their service tier, or to be retried. */
  waiting: number;
  /** Batch lines waiting in the deployment's queue. */
  batch_queued: number;
  /** Jobs waiting in per-worker queues (routed to the worker that holds their prompt). */
  routed: number;
  /** Jobs a worker is running. */
  running: number;
  /** Lines of running batches still in their input file, queued as the batch's window moves on. */
  batch_unqueued: number;
}

export interface DeploymentSignal extends WorkBreakdown {
  deployment: string;
  pool: string;
}

export interface PoolSignal extends WorkBreakdown {
  pool: string;
  /** The pool's deployments, each with its own breakdown. */
  deployments: Record<string, WorkBreakdown>;
}
