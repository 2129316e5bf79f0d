import type { BatchLineResult } from '@conveyor/queue';

/**
 * Where a worker hands finished batch lines, for the batch runner to collect. The job handlers
 * depend on this port; the batch's results list in Redis is the adapter behind it.
 */
export abstract class BatchResultSink {
  abstract push(batchId: string, result: BatchLineResult): Promise<void>;
}
