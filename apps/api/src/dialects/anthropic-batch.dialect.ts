import { ErrorCode, errorTypeFor, type Message, type MessagesErrorBody } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import type { BatchResultDialect } from '../contracts/batch-endpoint.js';
import { toMessagesError } from './anthropic.dialect.js';
import { LOST_MESSAGE } from './openai-batch.dialect.js';

/** An error result's body: the error the synchronous route would have answered, in Anthropic's shape. */
export function errorResult(status: number, message: string, code: string | null): MessagesErrorBody {
  return toMessagesError(new OpenAiHttpError(status, errorTypeFor(status), message, null, code)).body;
}

/**
 * Anthropic's Message Batches: each request's result line (`succeeded` with its message, `errored` with
 * the error its route would have answered, `canceled` or `expired` when it never ran), written as the
 * results endpoint serves it. A request lost in the queue is the platform's fault, as a 500 is.
 */
export const ANTHROPIC_BATCH_RESULTS: BatchResultDialect = {
  succeeded: (_batchId, r, message) => ({
    custom_id: r.customId,
    result: { type: 'succeeded', message: message as Message },
  }),
  failed: (_batchId, r) => ({
    custom_id: r.customId,
    result: { type: 'errored', error: errorResult(r.status, r.message, r.code) },
  }),
  notRun: (_batchId, customId, code) => ({
    custom_id: customId,
    result: { type: code === ErrorCode.batchCancelled ? 'canceled' : 'expired' },
  }),
  lost: (_batchId, customId) => ({
    custom_id: customId,
    result: { type: 'errored', error: errorResult(500, LOST_MESSAGE, ErrorCode.lineLost) },
  }),
};
