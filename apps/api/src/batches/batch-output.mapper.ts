import type { BatchLineResult } from '@conveyor/queue';
import type { BatchEndpoint, BatchResultLine } from '../contracts/batch-endpoint.js';

/**
 * A worker's result → its line, in the family of batches its route declares: the route shapes a finished
 * request's response, as it answers it, and the family the line around it.
 */
export function toResultLine(batchId: string, r: BatchLineResult, endpoint: BatchEndpoint): BatchResultLine {
  if (!r.ok) return endpoint.batchResults.failed(batchId, r);
  const created = Math.floor((r.finishedAt ?? Date.now()) / 1000);
  const response = endpoint.toResponse(
    { id: `${endpoint.idPrefix}${r.requestId}`, model: r.model, created },
    r.reply,
    r.view ?? {},
  );
  return endpoint.batchResults.succeeded(batchId, r, response);
}

export const toJsonl = (lines: readonly BatchResultLine[]): string =>
  lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
