import type { Batch, BatchError } from '@conveyor/openai';

/**
 * A batch as kept in Redis (the wire object's fields plus bookkeeping): one
 * hash whose fields are updated one at a time, so the runner's progress and a
 * client's cancel never overwrite each other.
 */
export type BatchRecord = Omit<Batch, 'object' | 'errors' | 'request_counts'> & {
  /** API key name that created the batch; other keys cannot see it. */
  owner: string;
  errors: BatchError[] | null;
  total: number;
  completed: number;
  failed: number;
  /** Lines handed to the queue so far (line numbers up to here are fed). */
  fed_line: number;
  /** Parts of the output and error files written and committed so far: the next write is part number this. */
  output_parts: number;
  error_parts: number;
  /** Set by a cancel request; the runner drains and then marks the batch cancelled. */
  cancel_requested: boolean;
};
