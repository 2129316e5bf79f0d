import type { AdminBatch, Batch, BatchEndpointUrl } from '@conveyor/openai';
import type { BatchRecord } from '../repositories/batch-record.js';
import { planReport } from './plan-report.mapper.js';

/** A batch record as the Batches API answers it. */
export function toBatch(r: BatchRecord & { endpoint: BatchEndpointUrl }): Batch {
  return { ...batchFields(r), endpoint: r.endpoint };
}

/** Any key's batch, a Message Batch too, in the Batches API's shape with its owner: what the admin lists. */
export function toAdminBatch(r: BatchRecord): AdminBatch {
  return { ...batchFields(r), endpoint: r.endpoint, owner: r.owner };
}

function batchFields(r: BatchRecord): Omit<Batch, 'endpoint'> {
  return {
    id: r.id,
    object: 'batch',
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
    ...planReport(r),
  };
}
