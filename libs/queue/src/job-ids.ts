/**
 * The ids jobs and batches go by, made and read back in one place: a request's job id is its
 * request id (a UUID); a batch line's job id names its batch and line, so whoever sees only the
 * job (a failure event, say) can find the line it belongs to.
 */
import { randomBytes } from 'node:crypto';

const REQUEST_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BATCH_ID = /^batch_[a-f0-9]{24}$/;
const MESSAGE_BATCH_ID = /^msgbatch_[a-f0-9]{24}$/;
const BATCH_LINE_JOB_ID = /^((?:msg)?batch_[a-f0-9]{24})-([1-9]\d*)$/;

export const isRequestId = (id: string): boolean => REQUEST_ID.test(id);

export const isBatchId = (id: string): boolean => BATCH_ID.test(id);

export const newBatchId = (): string => `batch_${randomBytes(12).toString('hex')}`;

/** Anthropic's Message Batches run on the same runner as OpenAI's batches, under ids of their own. */
export const isMessageBatchId = (id: string): boolean => MESSAGE_BATCH_ID.test(id);

export const newMessageBatchId = (): string => `msgbatch_${randomBytes(12).toString('hex')}`;

/** The job of line `line` (1-based) of batch `batchId`. */
export const batchLineJobId = (batchId: string, line: number): string => `${batchId}-${line}`;

/** The batch and line a batch-line job id names, or null for any other job id. */
export function parseBatchLineJobId(jobId: string): { batchId: string; line: number } | null {
  const match = BATCH_LINE_JOB_ID.exec(jobId);
  return match ? { batchId: match[1]!, line: Number(match[2]) } : null;
}

/** A webhook event's id (`evt_…`), made once as its batch ends and kept on every retry of its delivery. */
export const newEventId = (): string => `evt_${randomBytes(12).toString('hex')}`;
