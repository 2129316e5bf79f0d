import type { BatchEnding, BatchRecord } from './batch-record.js';

export type BatchCounter = 'total' | 'completed' | 'failed';

/** Batch records: one per batch, an index by creation time, and the set of batches still to drive. */
export abstract class BatchRecords {
  abstract create(record: BatchRecord): Promise<void>;
  abstract get(id: string): Promise<BatchRecord | null>;
  /** Updates some fields; the runner's progress and a client's cancel never overwrite each other. */
  abstract update(id: string, fields: Partial<BatchRecord>): Promise<void>;
  /**
   * Ends the batch with `ending`, and records the event its end makes, in one step; false (nothing
   * changed) when it had ended already. Every end of a batch goes through here.
   */
  abstract end(id: string, ending: BatchEnding): Promise<boolean>;
  abstract count(id: string, counter: BatchCounter, by: number): Promise<void>;
  /** Batches still to drive (validating, running, draining). */
  abstract active(): Promise<string[]>;
  abstract retire(id: string): Promise<void>;
  /** Removes an ended batch's record from the store and the index. */
  abstract delete(id: string): Promise<void>;
  /** Ids newest first, starting after `after`. */
  abstract idsAfter(after: string | undefined, count: number): Promise<string[]>;
}
