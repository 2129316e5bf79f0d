/** Where a request was sent, and why. */
export type RoutePick =
  /** A live worker with a free sequence holds `blocks` of the prompt's blocks: the job goes to it. */
  | { outcome: 'hit'; worker: string; blocks: number }
  /** Workers hold enough of the prompt, but none has a free sequence: the deployment's queue takes it. */
  | { outcome: 'saturated' }
  /** No live worker holds enough of the prompt. */
  | { outcome: 'miss' };

/**
 * What the live workers of a deployment hold in their sequences, and which one should take a prompt.
 * Services depend on this port; the repository reading the workers' announcements in Redis implements it.
 */
export abstract class WorkerRoutes {
  /**
   * The live worker with a free sequence that holds the longest run of `blocks` (at least `minBlocks`),
   * the one with more free sequences among equals. A worker picked has one free sequence less until it
   * says otherwise, so requests routed together spread over the workers that hold their prompt.
   */
  abstract pick(deployment: string, blocks: readonly string[], minBlocks: number): Promise<RoutePick>;
}
