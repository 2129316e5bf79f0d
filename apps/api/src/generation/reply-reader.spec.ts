import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { ErrorCode } from '@conveyor/openai';
import type { ReplyEvent } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { ClientGone, ReplyDeadlines, ReplyOutcome, readReply } from './reply-reader.js';
import { ReplySubscription } from '../contracts/reply-subscription.js';
import { drain } from '../../../../test/support/drain.js';
import { rejection } from '../../../../test/support/rejection.js';
import { delta, end, errorEvent, shuttingDown, start } from '../../../../test/support/reply-events.js';

// Fake timers throughout: the deadlines are timers, and a test must never wait for one.
beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
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
