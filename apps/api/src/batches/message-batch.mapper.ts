import {
  ErrorCode,
  type Message,
  type MessageBatch,
  type MessageBatchIndividualResponse,
  type MessageBatchProcessingStatus,
} from '@conveyor/openai';
import { errorResult } from '../dialects/anthropic-batch.dialect.js';
import type { BatchResultLine } from '../contracts/batch-endpoint.js';
import type { BatchRecord } from '../repositories/batch-record.js';
import { planReport } from './plan-report.mapper.js';

/** Where a batch's results are read; relative, so a client adds it to the address it already uses. */
export const resultsPath = (id: string): string => `/v1/messages/batches/${id}/results`;

const ENDED: ReadonlySet<BatchRecord['status']> = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** Processing has ended: every request has its result, and the batch may be deleted. */
export const hasEnded = (r: BatchRecord): boolean => ENDED.has(r.status);

const rfc3339 = (seconds: number): string => new Date(seconds * 1000).toISOString();
const rfc3339OrNull = (seconds: number | null): string | null => (seconds === null ? null : rfc3339(seconds));

function processingStatus(r: BatchRecord): MessageBatchProcessingStatus {
  if (hasEnded(r)) return 'ended';
  return r.status === 'cancelling' || r.cancel_requested ? 'canceling' : 'in_progress';
}

/**
 * A batch record as Anthropic's Message Batch. Requests not yet written count as processing until the
 * batch ends; then, those that never ran count as canceled or expired, as the batch ended (and as
 * errored when it failed as a whole). Finished requests are counted as they finish.
 */
export function toMessageBatch(r: BatchRecord): MessageBatch {
  const ended = hasEnded(r);
  const unwritten = Math.max(0, r.total - r.completed - r.failed);
  return {
    id: r.id,
    type: 'message_batch',
    processing_status: processingStatus(r),
    request_counts: {
      processing: ended ? 0 : unwritten,
      succeeded: r.completed,
      errored: r.failed + (r.status === 'failed' ? unwritten : 0),
      canceled: r.status === 'cancelled' ? unwritten : 0,
      expired: r.status === 'expired' ? unwritten : 0,
    },
    ended_at: rfc3339OrNull(r.completed_at ?? r.cancelled_at ?? r.expired_at ?? r.failed_at),
    created_at: rfc3339(r.created_at),
    expires_at: rfc3339(r.expires_at),
    cancel_initiated_at: rfc3339OrNull(r.cancelling_at),
    archived_at: null,
    results_url: ended ? resultsPath(r.id) : null,
    ...planReport(r),
  };
}

/**
 * A line of the batch's output or error file as Anthropic's result line. Message Batches write their
 * result lines as such (`ANTHROPIC_BATCH_RESULTS`); a line in OpenAI's form was written by a replica of a
 * version that wrote every batch's lines so, and is shown as the result it stands for.
 */
export function shownResult(stored: BatchResultLine): MessageBatchIndividualResponse {
  if ('result' in stored) return stored;
  const line = stored;
  const custom_id = line.custom_id;
  if (line.response?.status_code === 200) {
    return { custom_id, result: { type: 'succeeded', message: line.response.body as Message } };
  }
  if (line.error?.code === ErrorCode.batchCancelled) return { custom_id, result: { type: 'canceled' } };
  if (line.error?.code === ErrorCode.batchExpired) return { custom_id, result: { type: 'expired' } };
  // A line lost in the queue has no response: the platform's fault, as a 500 is.
  const status = line.response?.status_code ?? 500;
  const message = line.error?.message ?? 'The request failed.';
  return { custom_id, result: { type: 'errored', error: errorResult(status, message, line.error?.code ?? null) } };
}
