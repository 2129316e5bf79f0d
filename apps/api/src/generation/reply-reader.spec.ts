import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { ErrorCode } from '@conveyor/openai';
import type { ReplyEvent } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import {
  ClientGone,
  ReplyDeadlines,
  ReplyOutcome,
  readReply,
  replyError,
  type DeadlineOptions,
} from './reply-reader.js';
import type { OutputEvent } from './reply-run.js';
import { ReplySubscription } from './reply-subscription.js';
import { rejection } from '../../../../test/support/rejection.js';

const start = (attempt = 1, seq = 0, resumed = false): ReplyEvent => ({
  type: 'start',
  attempt,
  seq,
  promptTokens: 3,
  resumed,
});
const delta = (text: string, seq: number, attempt = 1): ReplyEvent => ({ type: 'delta', attempt, seq, text });
const end = (seq: number, attempt = 1): ReplyEvent => ({
  type: 'end',
  attempt,
  seq,
  finishReason: 'length',
  usage: { promptTokens: 3, completionTokens: 2 },
});
const errorEvent = (status: number, code: string, seq = 1): Extract<ReplyEvent, { type: 'error' }> => ({
  type: 'error',
  attempt: 1,
  seq,
  status,
  code,
  message: `worker says ${code}`,
});

const shuttingDown = () => new OpenAiHttpError(503, 'service_unavailable', 'bye', null, ErrorCode.serverShuttingDown);

// Fake timers throughout: the deadlines are timers, and a test must never wait for one.
beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
});

describe('ReplyDeadlines', () => {
  const setup = (
    options: Partial<DeadlineOptions> = {},
    onQueueTimeout: () => Promise<Error | null> = async () => null,
  ) => {
    const failures: unknown[] = [];
    const source = { fail: (error: unknown) => void failures.push(error) };
    let queueTimeouts = 0;
    const deadlines = new ReplyDeadlines(source, {
      requestTimeoutMs: 10_000,
      queueTimeoutMs: 1_000,
      onQueueTimeout: () => {
        queueTimeouts++;
        return onQueueTimeout();
      },
      ...options,
    });
    return { deadlines, failures, queueTimeouts: () => queueTimeouts };
  };

  it('fails the source with a 504 timeout error at the request deadline', async () => {
    const { failures } = setup({ queueTimeoutMs: null });
    await jest.advanceTimersByTimeAsync(9_999);
    expect(failures).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(failures).toHaveLength(1);
    const error = failures[0] as OpenAiHttpError;
    expect(error).toBeInstanceOf(OpenAiHttpError);
    expect(error.status).toBe(504);
    expect(error.type).toBe('server_error');
    expect(error.code).toBe(ErrorCode.timeout);
    expect(error.message).toContain('10000 ms');
  });

  it('asks to withdraw an untaken job at the queue deadline and fails the source with its error', async () => {
    const withdrawn = new Error('no worker took it');
    const { failures, queueTimeouts } = setup({}, async () => withdrawn);
    await jest.advanceTimersByTimeAsync(999);
    expect(queueTimeouts()).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(queueTimeouts()).toBe(1);
    expect(failures).toEqual([withdrawn]);
  });

  it('leaves the source alone when the queue deadline finds a worker took the job after all', async () => {
    const { failures, queueTimeouts } = setup({}, async () => null);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(queueTimeouts()).toBe(1);
    expect(failures).toEqual([]);
  });

  it('leaves the source alone when taking the job back fails', async () => {
    const { failures, queueTimeouts } = setup({}, () => Promise.reject(new Error('Redis is away')));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(queueTimeouts()).toBe(1);
    expect(failures).toEqual([]);
  });

  it('does not apply the queue deadline once a worker has taken the job', async () => {
    const { deadlines, failures, queueTimeouts } = setup({}, async () => new Error('withdrawn'));
    await jest.advanceTimersByTimeAsync(500);
    deadlines.markTaken();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(queueTimeouts()).toBe(0);
    expect(failures).toEqual([]);
  });

  it('has no queue deadline for a job already running (a resumed reply)', async () => {
    const { failures, queueTimeouts } = setup({ queueTimeoutMs: null }, async () => new Error('withdrawn'));
    await jest.advanceTimersByTimeAsync(9_999);
    expect(queueTimeouts()).toBe(0);
    expect(failures).toEqual([]);
  });

  it('stops both deadlines on clear', async () => {
    const { deadlines, failures, queueTimeouts } = setup({}, async () => new Error('withdrawn'));
    deadlines.clear();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(queueTimeouts()).toBe(0);
    expect(failures).toEqual([]);
  });
});

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
});

describe('readReply', () => {
  const setup = (queueTimeoutMs: number | null = null) => {
    let closes = 0;
    const source = new ReplySubscription('conveyor:reply:r1', () => void closes++);
    const controller = new AbortController();
    let queueTimeouts = 0;
    const deadlines = new ReplyDeadlines(source, {
      requestTimeoutMs: 10_000,
      queueTimeoutMs,
      onQueueTimeout: async () => {
        queueTimeouts++;
        return new Error('withdrawn');
      },
    });
    const observed: ReplyEvent[] = [];
    const outcomes: ReplyOutcome[] = [];
    const events = readReply(source, controller.signal, deadlines, {
      observe: (event) => void observed.push(event),
      finish: async (outcome) => void outcomes.push(outcome),
    });
    return {
      source,
      events,
      observed,
      outcomes,
      abort: () => controller.abort(),
      closes: () => closes,
      queueTimeouts: () => queueTimeouts,
    };
  };

  const drain = async (events: AsyncGenerator<OutputEvent>): Promise<OutputEvent[]> => {
    const seen: OutputEvent[] = [];
    for await (const event of events) seen.push(event);
    return seen;
  };

  it('hands on the events in order and returns at the end event, finishing once with a finished outcome', async () => {
    const { source, events, observed, outcomes, closes } = setup();
    source.push([start(), delta('Hel', 1), delta('lo', 2), end(3)]);
    // Anything after the end is never read.
    source.push([delta('late', 4)]);
    expect(await drain(events)).toEqual([start(), delta('Hel', 1), delta('lo', 2), end(3)]);
    expect(observed).toEqual([start(), delta('Hel', 1), delta('lo', 2), end(3)]);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({
      finished: true,
      label: 'length',
      usage: { promptTokens: 3, completionTokens: 2 },
    });
    expect(outcomes[0].cancelsJob).toBe(false);
    expect(closes()).toBe(1);
  });

  it('finishes once with a finished outcome when the consumer stops at the end event', async () => {
    const { source, events, outcomes } = setup();
    source.push([start(), end(1)]);
    for await (const event of events) if (event.type === 'end') break;
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0].cancelsJob).toBe(false);
  });

  it('drops late events of an earlier attempt and repeated events', async () => {
    const { source, events, observed } = setup();
    source.push([start(1, 0), delta('a', 1, 1)]);
    // Attempt 2 starts over; attempt 1's worker was slow to stop and writes once more.
    source.push([start(2, 0), delta('late', 2, 1), delta('b', 1, 2)]);
    // A repeat of an event already seen in attempt 2.
    source.push([delta('b', 1, 2), delta('c', 2, 2), end(3, 2)]);
    const expected = [start(1, 0), delta('a', 1, 1), start(2, 0), delta('b', 1, 2), delta('c', 2, 2), end(3, 2)];
    expect(await drain(events)).toEqual(expected);
    expect(observed).toEqual(expected);
  });

  it('ends with a retryable 503 at a gap (events a failover lost), handing on nothing after it and cancelling the job', async () => {
    const { source, events, outcomes } = setup();
    source.push([start(), delta('a', 1), delta('c', 3), end(4)]);
    expect((await events.next()).value).toEqual(start());
    expect((await events.next()).value).toEqual(delta('a', 1));
    const error = (await rejection(events.next())) as OpenAiHttpError;
    expect(error.status).toBe(503);
    expect(error.type).toBe('service_unavailable');
    expect(error.headers).toEqual({ 'retry-after': '1' });
    expect(outcomes[0].cancelsJob).toBe(true);
  });

  it('raises an error event as the HTTP error, without cancelling the job', async () => {
    const { source, events, outcomes, closes } = setup();
    source.push([start(), errorEvent(400, ErrorCode.contextLengthExceeded)]);
    expect(await events.next()).toEqual({ value: start(), done: false });
    const error = (await rejection(events.next())) as OpenAiHttpError;
    expect(error).toBeInstanceOf(OpenAiHttpError);
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.code).toBe(ErrorCode.contextLengthExceeded);
    expect(error.message).toBe('worker says context_length_exceeded');
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0].label).toBe(ErrorCode.contextLengthExceeded);
    expect(outcomes[0].cancelsJob).toBe(false);
    expect(closes()).toBe(1);
  });

  it('ends with ClientGone when the client leaves, finishing once with an outcome that cancels the job', async () => {
    const { source, events, outcomes, abort, closes } = setup();
    source.push([start()]);
    await events.next();
    const pending = events.next();
    abort();
    expect(await rejection(pending)).toBeInstanceOf(ClientGone);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0].label).toBe('client_gone');
    expect(outcomes[0].cancelsJob).toBe(true);
    expect(closes()).toBe(1);
    // Nothing more comes of a later abort or further reads.
    abort();
    expect(await events.next()).toEqual({ value: undefined, done: true });
    expect(outcomes).toHaveLength(1);
  });

  it('ends with a 504 at the request deadline, cancelling the job', async () => {
    const { events, outcomes } = setup();
    const failure = rejection(events.next());
    await jest.advanceTimersByTimeAsync(10_000);
    expect(await failure).toMatchObject({ status: 504, code: ErrorCode.timeout });
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0].label).toBe(ErrorCode.timeout);
    expect(outcomes[0].cancelsJob).toBe(true);
  });

  it('keeps the job running when the server ends the reply because it is shutting down', async () => {
    const { source, events, outcomes } = setup();
    const pending = events.next();
    source.fail(shuttingDown());
    expect(await rejection(pending)).toMatchObject({ code: ErrorCode.serverShuttingDown });
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0].cancelsJob).toBe(false);
  });

  it('takes any event as the sign that a worker has the job: the queue deadline no longer applies', async () => {
    const { source, events, queueTimeouts } = setup(1_000);
    source.push([start()]);
    await events.next();
    const pending = events.next();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(queueTimeouts()).toBe(0);
    source.push([end(1)]);
    expect(await pending).toEqual({ value: end(1), done: false });
  });

  it('clears its deadlines once the reply ends', async () => {
    const { source, events, queueTimeouts } = setup(1_000);
    const pending = events.next();
    source.close();
    expect(await pending).toEqual({ value: undefined, done: true });
    await jest.advanceTimersByTimeAsync(60_000);
    expect(queueTimeouts()).toBe(0);
  });

  it('finishes once with an abandoned outcome when the consumer stops early, or the source ends before the end event', async () => {
    const early = setup();
    early.source.push([start(), delta('a', 1)]);
    for await (const event of early.events) if (event.type === 'start') break;
    expect(early.outcomes).toHaveLength(1);
    expect(early.outcomes[0].label).toBe('abandoned');
    expect(early.outcomes[0].cancelsJob).toBe(true);
    expect(early.closes()).toBe(1);

    const cut = setup();
    cut.source.push([start()]);
    cut.source.close();
    expect(await drain(cut.events)).toEqual([start()]);
    expect(cut.outcomes).toHaveLength(1);
    expect(cut.outcomes[0].cancelsJob).toBe(true);
  });
});

describe('replyError', () => {
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
