import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '@conveyor/openai';
import type { BatchLineResult } from '@conveyor/queue';
import { ANTHROPIC_BATCH_RESULTS } from './anthropic-batch.dialect.js';

type Failed = Extract<BatchLineResult, { ok: false }>;

describe("Anthropic's Message Batch result lines", () => {
  const failed = (status: number, code: string): Failed =>
    ({ ok: false, customId: 'c', requestId: 'r', status, code, message: 'it went wrong' }) as Failed;

  it('writes a finished request as succeeded, with its message', () => {
    const message = { id: 'msg_1', type: 'message' };
    const done = { ok: true, customId: 'a', requestId: 'r' } as Extract<BatchLineResult, { ok: true }>;
    expect(ANTHROPIC_BATCH_RESULTS.succeeded('b', done, message)).toEqual({
      custom_id: 'a',
      result: { type: 'succeeded', message },
    });
  });

  it('writes requests that never ran as canceled and expired', () => {
    expect(ANTHROPIC_BATCH_RESULTS.notRun('b', 'x', ErrorCode.batchCancelled)).toEqual({
      custom_id: 'x',
      result: { type: 'canceled' },
    });
    expect(ANTHROPIC_BATCH_RESULTS.notRun('b', 'x', ErrorCode.batchExpired)).toEqual({
      custom_id: 'x',
      result: { type: 'expired' },
    });
  });

  it('writes a failure as errored, with the error Anthropic would have answered for its status', () => {
    expect(ANTHROPIC_BATCH_RESULTS.failed('b', failed(504, ErrorCode.timeout))).toEqual({
      custom_id: 'c',
      result: { type: 'errored', error: { type: 'error', error: { type: 'timeout_error', message: 'it went wrong' } } },
    });
    expect(ANTHROPIC_BATCH_RESULTS.failed('b', failed(400, ErrorCode.contextLengthExceeded))).toMatchObject({
      result: { error: { error: { type: 'invalid_request_error' } } },
    });
    // Lost in the queue: the platform's fault, as a 500 is.
    expect(ANTHROPIC_BATCH_RESULTS.lost('b', 'l')).toMatchObject({
      custom_id: 'l',
      result: { type: 'errored', error: { error: { type: 'api_error' } } },
    });
  });
});
