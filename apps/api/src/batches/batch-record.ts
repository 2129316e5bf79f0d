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
  /** Set by a cancel request; the runner drains and then marks the batch cancelled. */
  cancel_requested: boolean;
};

export function toBatch(r: BatchRecord): Batch {
  return {
    id: r.id,
    object: 'batch',
    endpoint: r.endpoint,
    errors: r.errors ? { object: 'list', data: r.errors } : null,
    input_file_id: r.input_file_id,
    completion_window: r.completion_window,
    status: r.status,
    output_file_id: r.output_file_id,
    error_file_id: r.error_file_id,
    created_at: r.created_at,
    in_progress_at: r.in_progress_at,
    expires_at: r.expires_at,
    finalizing_at: r.finalizing_at,
    completed_at: r.completed_at,
    failed_at: r.failed_at,
    expired_at: r.expired_at,
    cancelling_at: r.cancelling_at,
    cancelled_at: r.cancelled_at,
    request_counts: { total: r.total, completed: r.completed, failed: r.failed },
    metadata: r.metadata,
  };
}
