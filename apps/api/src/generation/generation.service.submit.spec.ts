import { describe, expect, it, jest } from '@jest/globals';
import { ErrorCode } from '@conveyor/openai';
import { isRequestId } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { ClientGone } from './reply-reader.js';
import { drain } from '../../../../test/support/drain.js';
import {
  QUEUE_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
  delta,
  end,
  keyOf,
  observations,
  requestIdOf,
  start,
  useGenerationHarness,
} from '../../../../test/support/generation-service.js';
import { rejection } from '../../../../test/support/rejection.js';

describe('GenerationService', () => {
  const t = useGenerationHarness();

  describe('submit', () => {
    it('queues exactly the job the builder makes, under the request id the reply is named by', async () => {
      const run = await t.request('alpha');
      expect(t.built).toHaveLength(1);
      const [{ requestId, now, job }] = t.built;
      expect(isRequestId(requestId)).toBe(true);
      expect(t.queue.enqueued).toHaveLength(1);
      // The job is the builder's, owned by the caller (only the caller may resume its reply), and names
      // this replica, whose inbox its reply's events go to, and the service tier it is served at.
      expect(t.queue.enqueued[0]).toEqual({ ...job, owner: 'anonymous', replyTo: 'replica-1', tier: 'default' });
      expect(run.who).toEqual({
        id: `chatcmpl-${requestId}`,
        model: 'alpha',
        created: Math.floor(now / 1000),
        tier: 'default',
      });
      expect(now).toBe(Date.now());
      expect(t.relay.subscribed).toEqual([keyOf(requestId)]);
    });

    it('gives each request its own id', async () => {
      const first = await t.request('alpha');
      const second = await t.request('alpha');
      expect(requestIdOf(first)).not.toBe(requestIdOf(second));
      expect(t.queue.enqueued.map((j) => j.requestId)).toEqual([requestIdOf(first), requestIdOf(second)]);
    });

    it("hands the reply's events to the caller in order and cancels nothing once it ends", async () => {
      const run = await t.request('alpha');
      const key = keyOf(requestIdOf(run));
      t.queue.take(requestIdOf(run));
      t.relay.write(key, [start, delta('Hel', 1)]);
      t.relay.write(key, [delta('lo', 2), end(3)]);
      expect(await drain(run.events)).toEqual([start, delta('Hel', 1), delta('lo', 2), end(3)]);
      expect(t.queue.cancelled).toEqual([]);
      expect(t.relay.open).toBe(0);
      // The queue wait and the first text are timed for requests this replica queued.
      expect(await observations(t.metrics.queueWait, 'alpha')).toBe(1);
      expect(await observations(t.metrics.timeToFirstToken, 'alpha')).toBe(1);
    });

    it("raises the worker's error as the HTTP error and does not cancel the job", async () => {
      const run = await t.request('alpha');
      t.relay.write(keyOf(requestIdOf(run)), [
        start,
        { type: 'error', attempt: 1, seq: 1, status: 400, code: ErrorCode.contextLengthExceeded, message: 'too long' },
      ]);
      expect(await run.events.next()).toEqual({ value: start, done: false });
      expect(await rejection(run.events.next())).toMatchObject({
        status: 400,
        code: ErrorCode.contextLengthExceeded,
        message: 'too long',
      });
      expect(t.queue.cancelled).toEqual([]);
    });

    it('cancels the job when the client leaves', async () => {
      const run = await t.request('alpha');
      const requestId = requestIdOf(run);
      t.queue.take(requestId);
      t.relay.write(keyOf(requestId), [start]);
      await run.events.next();
      const pending = rejection(run.events.next());
      t.client.abort();
      expect(await pending).toBeInstanceOf(ClientGone);
      expect(t.queue.cancelled).toEqual([{ deployment: 'alpha', requestId }]);
      expect(t.relay.open).toBe(0);
    });

    it('withdraws a job no worker took by the queue deadline, with a 503 naming the live workers', async () => {
      const run = await t.request('alpha');
      const requestId = requestIdOf(run);
      const pending = rejection(run.events.next());
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS - 1);
      expect(t.queue.withdrawn).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      const error = (await pending) as OpenAiHttpError;
      expect(error).toBeInstanceOf(OpenAiHttpError);
      expect(error.status).toBe(503);
      expect(error.code).toBe(ErrorCode.serviceUnavailable);
      expect(error.message).toContain('"alpha"');
      expect(error.message).toContain(`within ${QUEUE_TIMEOUT_MS} ms`);
      expect(error.message).toContain('(2 live workers)');
      expect(t.queue.withdrawn).toEqual([requestId]);
      expect(t.queue.isWaiting(requestId)).toBe(false);
    });

    it('names a single live worker in the singular', async () => {
      const run = await t.request('beta');
      const pending = rejection(run.events.next());
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS);
      expect(((await pending) as Error).message).toContain('(1 live worker)');
    });

    it('keeps a reply whose job a worker took before the queue deadline, even before its first event', async () => {
      const run = await t.request('alpha');
      const requestId = requestIdOf(run);
      const next = run.events.next();
      t.queue.take(requestId);
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS);
      expect(t.queue.withdrawn).toEqual([]);
      t.relay.write(keyOf(requestId), [start]);
      expect(await next).toEqual({ value: start, done: false });
    });

    it('does not try to withdraw a job whose reply has started', async () => {
      const run = await t.request('alpha');
      const requestId = requestIdOf(run);
      t.relay.write(keyOf(requestId), [start]);
      await run.events.next();
      const next = run.events.next();
      // The worker has not been marked as holding it: only the reply's start says so.
      expect(t.queue.isWaiting(requestId)).toBe(true);
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS * 2);
      expect(t.queue.withdrawn).toEqual([]);
      t.relay.write(keyOf(requestId), [end(1)]);
      expect(await next).toEqual({ value: end(1), done: false });
    });

    it('ends a reply at the request deadline with 504 and cancels its job', async () => {
      const run = await t.request('alpha');
      const requestId = requestIdOf(run);
      t.relay.write(keyOf(requestId), [start]);
      await run.events.next();
      const pending = rejection(run.events.next());
      await jest.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS);
      expect(await pending).toMatchObject({ status: 504, code: ErrorCode.timeout });
      expect(t.queue.cancelled).toEqual([{ deployment: 'alpha', requestId }]);
    });
  });
});
