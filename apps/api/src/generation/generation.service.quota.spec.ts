import { describe, expect, it, jest } from '@jest/globals';
import { ErrorCode } from '@conveyor/openai';
import type { GenerationJobData, ReplyEvent } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import type { SubmitOptions } from './generation.service.js';
import { drain } from '../../../../test/support/drain.js';
import {
  METERED,
  OPTIONS,
  QUEUE_TIMEOUT_MS,
  delta,
  end,
  keyOf,
  requestIdOf,
  start,
  useGenerationHarness,
} from '../../../../test/support/generation-service.js';
import { rejection } from '../../../../test/support/rejection.js';

/** 'Hi' is 2 bytes (1 token) and a turn's 4, then max_tokens: what a request below reserves. */
const MAX_TOKENS = 100;
const ESTIMATE = 1 + 4 + MAX_TOKENS;

describe('GenerationService: token quotas', () => {
  const t = useGenerationHarness();

  const job = (requestId: string, now: number): GenerationJobData => ({
    requestId,
    deployment: 'alpha',
    messages: [{ role: 'user', content: 'Hi' }],
    sampling: { temperature: 0 },
    stop: [],
    maxTokens: MAX_TOKENS,
    enqueuedAt: now,
  });
  /** A request of `caller`'s, with the headers its reply run carries for the HTTP reply. */
  const request = async (caller = METERED.name, surface: SubmitOptions['surface'] = OPTIONS.surface) => {
    const run = await t.service.submit(t.registry.require('alpha'), job, t.client.signal, {
      ...OPTIONS,
      caller,
      surface,
    });
    return { run, headers: run.headers, requestId: requestIdOf(run) };
  };

  it("reserves a request's estimate as it is queued, and sends the token headers", async () => {
    const { headers, requestId } = await request();
    expect(t.quotas.holds.get(requestId)).toBe(ESTIMATE);
    expect(t.quotas.used.minute).toBe(ESTIMATE);
    expect(headers).toEqual({
      'x-ratelimit-limit-tokens': String(METERED.perMinute),
      'x-ratelimit-remaining-tokens': String(METERED.perMinute - ESTIMATE),
      'x-ratelimit-reset-tokens': expect.stringMatching(/^\d+s$/),
    });
  });

  it('replaces the reservation by the usage the reply ends with', async () => {
    const { run, requestId } = await request();
    t.relay.write(keyOf(requestId), [start, delta('Hel', 1), end(2)]);
    await drain(run.events);
    // end(): 4 prompt tokens and 2 completion tokens.
    expect(t.quotas.settled).toEqual([{ requestId, used: 6 }]);
    expect(t.quotas.used.minute).toBe(6);
  });

  const generated: ReplyEvent = { type: 'delta', attempt: 1, seq: 1, text: 'Hel', tokens: 3 };

  it('charges a reply the client left what its events showed: its prompt and the tokens generated', async () => {
    const { run, requestId } = await request();
    t.relay.write(keyOf(requestId), [start, generated]);
    await run.events.next();
    await run.events.next();
    const pending = rejection(run.events.next());
    t.client.abort();
    await pending;
    expect(t.quotas.settled).toEqual([{ requestId, used: 4 + 3 }]);
  });

  it('gives back the whole reservation of a job withdrawn before any worker took it', async () => {
    const { run, requestId } = await request();
    const pending = rejection(run.events.next());
    await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS);
    expect(await pending).toMatchObject({ status: 503 });
    expect(t.quotas.settled).toEqual([{ requestId, used: 0 }]);
    expect(t.quotas.used.minute).toBe(0);
  });

  it('leaves a reply let go at shutdown to whoever follows it on', async () => {
    const { run, requestId } = await request();
    t.relay.write(keyOf(requestId), [start]);
    await run.events.next();
    const pending = rejection(run.events.next());
    t.service.letGo(requestId);
    await pending;
    expect(t.quotas.settled).toEqual([]);
    expect(t.quotas.holds.get(requestId)).toBe(ESTIMATE);
  });

  it('refuses with a 429 and the token headers when the minute has no room, queueing nothing', async () => {
    const fits = Math.floor(METERED.perMinute / ESTIMATE);
    // Each taken by a worker as it comes, so the queue's own limit is not what refuses.
    for (let i = 0; i < fits; i++) t.queue.take((await request()).requestId);
    const queued = t.queue.enqueued.length;
    const error = (await rejection(request())) as OpenAiHttpError;
    expect(error).toBeInstanceOf(OpenAiHttpError);
    expect(error).toMatchObject({ status: 429, type: 'rate_limit_error', code: ErrorCode.rateLimitExceeded });
    expect(error.message).toContain('tokens per min (TPM)');
    expect(error.headers).toMatchObject({
      'x-ratelimit-limit-tokens': String(METERED.perMinute),
      'x-ratelimit-remaining-tokens': String(METERED.perMinute - fits * ESTIMATE),
      'retry-after': expect.stringMatching(/^\d+$/),
    });
    expect(t.queue.enqueued).toHaveLength(queued);
    expect(t.relay.subscribed).toHaveLength(queued);
  });

  it('reserves nothing for a key without a token limit, nor for a tokenizing job', async () => {
    const { headers } = await request('anonymous');
    await request(METERED.name, { idPrefix: 'tok-', route: null, operation: null });
    expect(t.quotas.holds.size).toBe(0);
    expect(headers).toEqual({});
  });

  it('refuses with a 503, queueing nothing, while the quota cannot be read', async () => {
    t.quotas.reserve = () => Promise.reject(new Error("Stream isn't writeable"));
    const error = (await rejection(request())) as OpenAiHttpError;
    expect(error).toMatchObject({ status: 503, code: ErrorCode.serviceUnavailable });
    expect(t.queue.enqueued).toEqual([]);
  });

  it('answers a reply whose tokens cannot be settled as if they had been', async () => {
    t.quotas.settle = () => Promise.reject(new Error("Stream isn't writeable"));
    const { run, requestId } = await request();
    t.relay.write(keyOf(requestId), [start, delta('Hel', 1), end(2)]);
    expect(await drain(run.events)).toHaveLength(3);
  });
});
