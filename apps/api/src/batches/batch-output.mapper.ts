import { randomBytes } from 'node:crypto';
import type { BatchOutputLine } from '@conveyor/openai';
import type { BatchLineResult } from '@conveyor/queue';
import { BATCH_ENDPOINTS } from './batch-endpoints.js';

const lineId = (): string => `batch_req_${randomBytes(12).toString('hex')}`;

/** A worker's result → the line for the output file (success) or the error file (failure). */
export function toOutputLine(r: BatchLineResult, endpoint: string, now = Date.now()): BatchOutputLine {
  if (r.ok) {
    const route = BATCH_ENDPOINTS[endpoint] ?? BATCH_ENDPOINTS['/v1/chat/completions']!;
    const body = route.toResponse({ id: `${route.idPrefix}${r.requestId}`, model: r.model, created: Math.floor(now / 1000) }, r.reply);
    return { id: lineId(), custom_id: r.customId, response: { status_code: 200, request_id: r.requestId, body }, error: null };
  }
  const type = r.status >= 500 ? 'server_error' : 'invalid_request_error';
  return {
    id: lineId(),
    custom_id: r.customId,
    response: { status_code: r.status, request_id: r.requestId, body: { error: { message: r.message, type, param: null, code: r.code } } },
    error: { code: r.code, message: r.message },
  };
}

/** The error line of a request that never ran: the batch was cancelled or expired first. */
export function notRunLine(customId: string, code: 'batch_cancelled' | 'batch_expired'): BatchOutputLine {
  const message = code === 'batch_cancelled' ? 'The batch was cancelled before this request ran.' : 'The batch expired before this request ran.';
  return { id: lineId(), custom_id: customId, response: null, error: { code, message } };
}

export const toJsonl = (lines: readonly BatchOutputLine[]): string => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
