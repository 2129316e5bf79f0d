/**
 * How many lines of each running batch are still to be queued, per deployment: what the autoscaling
 * signal adds to the jobs in the queues, so a batch far larger than its window is seen whole. Services
 * depend on this port; the repository keeping the counts in Redis implements it.
 */
export abstract class UnqueuedLines {
  /** A validated batch is about to run: `byDeployment` of its lines, none queued yet. */
  abstract expect(batchId: string, byDeployment: ReadonlyMap<string, number>): Promise<void>;
  /**
   * Lines of the batch were queued for `deployment`, at these positions of its feeding order (rising):
   * a tick's lines in one call. Each counted once: lines are fed in order, so a line at or before the
   * last one counted (fed again after a failure, or recovered) changes nothing.
   */
  abstract queued(batchId: string, deployment: string, lines: readonly number[]): Promise<void>;
  /** The batch ends, or its unqueued lines never will run (cancelled, expired): its counts go. */
  abstract forget(batchId: string, deployments: readonly string[]): Promise<void>;
}
