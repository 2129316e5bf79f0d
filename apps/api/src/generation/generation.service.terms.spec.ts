import { describe, expect, it, jest } from '@jest/globals';
import { ErrorCode } from '@conveyor/openai';
import type { OpenAiHttpError } from '../errors/openai-http.error.js';
import {
  FLEX_QUEUE_DEPTH,
  MAX_QUEUE_DEPTH,
  useGenerationHarness,
} from '../../../../test/support/generation-service.js';
import { rejection } from '../../../../test/support/rejection.js';

describe("GenerationService and a request's terms (service tier, deadline)", () => {
  const t = useGenerationHarness();

  it('queues the job in the tier the caller may use: anonymous callers have all but priority', async () => {
    await t.request('alpha', undefined, { tier: 'flex' });
    const run = await t.request('beta', undefined, { tier: 'priority' });
    expect(t.queue.enqueued.map((job) => job.tier)).toEqual(['flex', 'default']);
    expect(run.who.tier).toBe('default');
  });

  it('refuses flex with 429 resource_unavailable once the queue is FLEX_QUEUE_DEPTH deep, and still admits default', async () => {
    for (let i = 0; i < FLEX_QUEUE_DEPTH; i++) await t.request('alpha');
    const error = (await rejection(t.request('alpha', undefined, { tier: 'flex' }))) as OpenAiHttpError;
    expect(error).toMatchObject({
      status: 429,
      type: 'rate_limit_error',
      code: ErrorCode.resourceUnavailable,
      param: 'service_tier',
      headers: { 'retry-after': '1' },
    });
    expect(t.queue.enqueued).toHaveLength(FLEX_QUEUE_DEPTH);
    expect(FLEX_QUEUE_DEPTH).toBeLessThan(MAX_QUEUE_DEPTH);
    await t.request('alpha', undefined, { tier: 'default' });
    expect(t.queue.enqueued).toHaveLength(FLEX_QUEUE_DEPTH + 1);
  });

  it('puts the deadline on the job, and withdraws a job still queued when it passes (504 deadline_exceeded)', async () => {
    const received = Date.now();
    const run = await t.request('alpha', undefined, { deadlineMs: 1_000 });
    expect(t.queue.enqueued[0]!.deadlineAt).toBe(received + 1_000);
    const pending = rejection(run.events.next());
    await jest.advanceTimersByTimeAsync(1_000);
    const error = (await pending) as OpenAiHttpError;
    expect(error).toMatchObject({
      status: 504,
      code: ErrorCode.deadlineExceeded,
      headers: { 'x-should-retry': 'false' },
    });
    expect(error.message).toMatch(/deadline of 1000 ms passed after \d+ ms in the queue, before any worker took it/);
    expect(t.queue.withdrawn).toEqual([t.built[0]!.requestId]);
  });

  it('puts no deadline on a job when nothing names one', async () => {
    await t.request('alpha');
    expect(t.queue.enqueued[0]!.deadlineAt).toBeUndefined();
  });
});
