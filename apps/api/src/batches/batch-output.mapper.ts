import { createHash } from 'node:crypto';
import { ErrorCode, errorTypeFor, type BatchOutputLine } from '@conveyor/openai';
import type { BatchLineResult } from '@conveyor/queue';
import type { BatchEndpoint } from '../generation/batch-endpoint.js';

/**
 * A line's id follows from its batch and custom_id, so a part written again after a crash says
 * exactly what the first write said.
 */
const lineId = (batchId: string, customId: string): string =>
  `batch_req_${createHash('sha256').update(batchId).update('\0').update(customId).digest('hex').slice(0, 24)}`;

/** A worker's result → the line for the output file (success) or the error file (failure). */
export function toOutputLine(batchId: string, r: BatchLineResult, endpoint: BatchEndpoint): BatchOutputLine {
  if (r.ok) {
    const created = Math.floor((r.finishedAt ?? Date.now()) / 1000);
    const body = endpoint.toResponse(
      { id: `${endpoint.idPrefix}${r.requestId}`, model: r.model, created },
      r.reply,
      r.view ?? {},
    );
    return {
      id: lineId(batchId, r.customId),
      custom_id: r.customId,
      response: { status_code: 200, request_id: r.requestId, body },
      error: null,
    };
  }
  const type = errorTypeFor(r.status);
  return {
    id: lineId(batchId, r.customId),
    custom_id: r.customId,
    response: {
      status_code: r.status,
      request_id: r.requestId,
      body: { error: { message: r.message, type, param: null, code: r.code } },
    },
    error: { code: r.code, message: r.message },
  };
}

/** Why a line never ran. */
export type NotRunCode = typeof ErrorCode.batchCancelled | typeof ErrorCode.batchExpired;

/** The error line of a request that never ran: the batch was cancelled or expired first. */
export function notRunLine(batchId: string, customId: string, code: NotRunCode): BatchOutputLine {
  const message =
    code === ErrorCode.batchCancelled
      ? 'The batch was cancelled before this request ran.'
      : 'The batch expired before this request ran.';
  return { id: lineId(batchId, customId), custom_id: customId, response: null, error: { code, message } };
}

/**
 * The error line of a request whose job was lost more than once (a Redis failover, say) and that was
 * queued again each time: the batch ends with every custom_id accounted for rather than waiting forever.
 */
export function lostLine(batchId: string, customId: string): BatchOutputLine {
  const message = 'The request was lost in the queue and not run; submit it again.';
  return {
    id: lineId(batchId, customId),
    custom_id: customId,
    response: null,
    error: { code: ErrorCode.lineLost, message },
  };
}

export const toJsonl = (lines: readonly BatchOutputLine[]): string =>
  lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
