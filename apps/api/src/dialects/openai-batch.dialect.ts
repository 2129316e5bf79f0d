import { createHash } from 'node:crypto';
import { ErrorCode, errorTypeFor, type BatchOutputLine } from '@conveyor/openai';
import type { BatchResultDialect } from '../contracts/batch-endpoint.js';

/**
 * A line's id follows from its batch and custom_id, so a part written again after a crash says
 * exactly what the first write said.
 */
const lineId = (batchId: string, customId: string): string =>
  `batch_req_${createHash('sha256').update(batchId).update('\0').update(customId).digest('hex').slice(0, 24)}`;

/**
 * OpenAI's Batches API: a request that finished is a line of the output file with its response; one
 * that failed is a line of the error file with the error response its route would have answered (and
 * `error`); one that never ran, or was lost, has an `error` and no response.
 */
export const OPENAI_BATCH_RESULTS: BatchResultDialect = {
  succeeded: (batchId, r, body): BatchOutputLine => ({
    id: lineId(batchId, r.customId),
    custom_id: r.customId,
    response: { status_code: 200, request_id: r.requestId, body },
    error: null,
  }),
  failed: (batchId, r): BatchOutputLine => ({
    id: lineId(batchId, r.customId),
    custom_id: r.customId,
    response: {
      status_code: r.status,
      request_id: r.requestId,
      body: { error: { message: r.message, type: errorTypeFor(r.status), param: null, code: r.code } },
    },
    error: { code: r.code, message: r.message },
  }),
  notRun: (batchId, customId, code): BatchOutputLine => ({
    id: lineId(batchId, customId),
    custom_id: customId,
    response: null,
    error: {
      code,
      message:
        code === ErrorCode.batchCancelled
          ? 'The batch was cancelled before this request ran.'
          : 'The batch expired before this request ran.',
    },
  }),
  lost: (batchId, customId): BatchOutputLine => ({
    id: lineId(batchId, customId),
    custom_id: customId,
    response: null,
    error: { code: ErrorCode.lineLost, message: LOST_MESSAGE },
  }),
};

/** What a request lost in the queue is told, in either family's line. */
export const LOST_MESSAGE = 'The request was lost in the queue and not run; submit it again.';
