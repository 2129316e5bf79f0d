import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '@conveyor/openai';
import type { ReplyEvent } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { ClientGone, ReplyOutcome, replyError } from './reply-reader.js';
import { end, errorEvent, shuttingDown } from '../../../../test/support/reply-events.js';

describe('ReplyOutcome', () => {
  it('starts abandoned, which cancels the job', () => {
    const outcome = new ReplyOutcome();
    expect(outcome.label).toBe('abandoned');
    expect(outcome.finished).toBe(false);
    expect(outcome.cancelsJob).toBe(true);
  });

  it('is labelled by the finish reason and keeps the usage of a finished reply, which cancels nothing', () => {
    const outcome = new ReplyOutcome();
    outcome.ended(end(3) as Extract<ReplyEvent, { type: 'end' }>);
    expect(outcome.label).toBe('length');
    expect(outcome.usage).toEqual({ promptTokens: 3, completionTokens: 2 });
    expect(outcome.finished).toBe(true);
    expect(outcome.cancelsJob).toBe(false);
  });

  it("is labelled by the worker's error code when the worker reported an error, which cancels nothing", () => {
    const outcome = new ReplyOutcome();
    const event = errorEvent(400, ErrorCode.contextLengthExceeded);
    outcome.ended(event);
    // The reader then raises the event as an error: the label stays the worker's.
    outcome.failed(replyError(event));
    expect(outcome.label).toBe(ErrorCode.contextLengthExceeded);
    expect(outcome.cancelsJob).toBe(false);
  });

  it('is client_gone when the client left, which cancels the job', () => {
    const outcome = new ReplyOutcome();
    outcome.failed(new ClientGone());
    expect(outcome.label).toBe('client_gone');
    expect(outcome.cancelsJob).toBe(true);
  });

  it('is labelled by the code of an HTTP error (a deadline), which cancels the job', () => {
    const outcome = new ReplyOutcome();
    outcome.failed(OpenAiHttpError.timeout(5));
    expect(outcome.label).toBe(ErrorCode.timeout);
    expect(outcome.cancelsJob).toBe(true);
  });

  it('is error for an HTTP error without a code and for any other failure', () => {
    const uncoded = new ReplyOutcome();
    uncoded.failed(new OpenAiHttpError(500, 'server_error', 'no code'));
    expect(uncoded.label).toBe('error');
    const other = new ReplyOutcome();
    other.failed(new Error('boom'));
    expect(other.label).toBe('error');
    expect(other.cancelsJob).toBe(true);
  });

  it('keeps the job running when the server is shutting down, so the client can resume elsewhere', () => {
    const outcome = new ReplyOutcome();
    outcome.failed(shuttingDown());
    expect(outcome.label).toBe(ErrorCode.serverShuttingDown);
    expect(outcome.finished).toBe(false);
    expect(outcome.cancelsJob).toBe(false);
  });
});

describe('replyError', () => {
  it('is the HTTP error with the status, its type and the code of the event', () => {
    const badInput = replyError(errorEvent(400, ErrorCode.contextLengthExceeded));
    expect(badInput).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      code: ErrorCode.contextLengthExceeded,
      message: 'worker says context_length_exceeded',
      param: null,
    });
    expect(replyError(errorEvent(500, ErrorCode.generationFailed))).toMatchObject({
      status: 500,
      type: 'server_error',
    });
  });

  it("answers a worker's error event with its status, code and the field it names", () => {
    const error = replyError({
      type: 'error',
      attempt: 1,
      seq: 0,
      status: 400,
      code: 'invalid_value',
      message: 'The prompt is empty.',
      param: 'prompt',
    });
    expect(error.status).toBe(400);
    expect(error.toBody()).toEqual({
      error: { message: 'The prompt is empty.', type: 'invalid_request_error', param: 'prompt', code: 'invalid_value' },
    });
  });

  it('names no field when the worker names none', () => {
    const error = replyError({
      type: 'error',
      attempt: 1,
      seq: 0,
      status: 500,
      code: 'generation_failed',
      message: 'x',
    });
    expect(error.toBody().error).toMatchObject({ type: 'server_error', param: null, code: 'generation_failed' });
  });
});
