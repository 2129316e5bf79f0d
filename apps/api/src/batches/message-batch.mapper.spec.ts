import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '@conveyor/openai';
import { MESSAGES_URL, newBatchRecord, type BatchRecord } from '../repositories/batch-record.js';
import { toMessageBatch, shownResult } from './message-batch.mapper.js';

const T0 = Date.parse('2026-11-25T10:00:00Z') / 1000;
const record = (fields: Partial<BatchRecord> = {}): BatchRecord => ({
  ...newBatchRecord({
    id: 'msgbatch_0123456789abcdef01234567',
    owner: 'main',
    endpoint: MESSAGES_URL,
    input_file_id: 'file-1',
    completion_window: '24h',
    metadata: null,
    created_at: T0,
    expires_at: T0 + 86400,
  }),
  total: 10,
  ...fields,
});

describe('toMessageBatch', () => {
  it('counts unfinished requests as processing while it runs, finished ones as they finish', () => {
    expect(toMessageBatch(record({ status: 'in_progress', completed: 3, failed: 1 }))).toEqual({
      id: 'msgbatch_0123456789abcdef01234567',
      type: 'message_batch',
      processing_status: 'in_progress',
      request_counts: { processing: 6, succeeded: 3, errored: 1, canceled: 0, expired: 0 },
      ended_at: null,
      created_at: '2026-11-25T10:00:00.000Z',
      expires_at: '2026-11-26T10:00:00.000Z',
      cancel_initiated_at: null,
      archived_at: null,
      results_url: null,
    });
  });

  it('is canceling from the cancel on, also while its requests are still being checked', () => {
    const asked = { cancel_requested: true, cancelling_at: T0 + 5 };
    expect(toMessageBatch(record({ status: 'validating', ...asked }))).toMatchObject({
      processing_status: 'canceling',
      cancel_initiated_at: '2026-11-25T10:00:05.000Z',
    });
    expect(toMessageBatch(record({ status: 'cancelling', ...asked })).processing_status).toBe('canceling');
  });

  it.each([
    ['cancelled', { cancelled_at: T0 + 9 }, { canceled: 6 }],
    ['expired', { expired_at: T0 + 9 }, { expired: 6 }],
    ['completed', { completed_at: T0 + 9 }, {}],
    ['failed', { failed_at: T0 + 9 }, { errored: 7 }],
  ] as const)(
    'once %s, counts the requests that never ran as that, and gives its results URL',
    (status, at, counts) => {
      const batch = toMessageBatch(record({ status, completed: 3, failed: 1, ...at }));
      expect(batch).toMatchObject({
        processing_status: 'ended',
        ended_at: '2026-11-25T10:00:09.000Z',
        results_url: '/v1/messages/batches/msgbatch_0123456789abcdef01234567/results',
      });
      expect(batch.request_counts).toEqual({
        processing: 0,
        succeeded: 3,
        errored: 1,
        canceled: 0,
        expired: 0,
        ...counts,
      });
    },
  );
});

describe('shownResult of a line in the OpenAI form earlier versions wrote', () => {
  const message = { id: 'msg_1', type: 'message' };
  it('maps an output line to succeeded, with its message', () => {
    const line = {
      id: 'batch_req_1',
      custom_id: 'a',
      response: { status_code: 200, request_id: 'r', body: message },
      error: null,
    };
    expect(shownResult(line)).toEqual({ custom_id: 'a', result: { type: 'succeeded', message } });
  });

  it('maps requests that never ran to canceled and expired', () => {
    const notRun = (code: string) => ({ id: 'x', custom_id: 'b', response: null, error: { code, message: 'm' } });
    expect(shownResult(notRun(ErrorCode.batchCancelled)).result).toEqual({ type: 'canceled' });
    expect(shownResult(notRun(ErrorCode.batchExpired)).result).toEqual({ type: 'expired' });
  });

  it('maps a failure to errored with the error Anthropic would have answered for its status', () => {
    const failed = (status: number | null, code: string) => ({
      id: 'x',
      custom_id: 'c',
      response: status === null ? null : { status_code: status, request_id: 'r', body: {} },
      error: { code, message: 'it went wrong' },
    });
    expect(shownResult(failed(504, ErrorCode.timeout)).result).toEqual({
      type: 'errored',
      error: { type: 'error', error: { type: 'timeout_error', message: 'it went wrong' } },
    });
    expect(shownResult(failed(400, ErrorCode.contextLengthExceeded)).result).toMatchObject({
      error: { error: { type: 'invalid_request_error' } },
    });
    // Lost in the queue: no response at all, the platform's fault.
    expect(shownResult(failed(null, ErrorCode.lineLost)).result).toMatchObject({
      error: { error: { type: 'api_error' } },
    });
  });
});
