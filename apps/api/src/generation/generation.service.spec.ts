import { describe, expect, it, jest } from '@jest/globals';
import { ErrorCode } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { drain } from '../../../../test/support/drain.js';
import {
  MAX_QUEUE_DEPTH,
  QUEUE_TIMEOUT_MS,
  delta,
  end,
  keyOf,
  requestIdOf,
  start,
  useGenerationHarness,
} from '../../../../test/support/generation-service.js';
import { rejection } from '../../../../test/support/rejection.js';

/** What a call threw; fails the test when it returns. */
function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('GenerationService', () => {
  const t = useGenerationHarness();

  describe('deploymentFor', () => {
    it('is the deployment the model names', () => {
      expect(t.service.deploymentFor('beta').id).toBe('beta');
      expect(t.service.deploymentFor('beta', t.registry.require('beta')).id).toBe('beta');
    });

    it('refuses a model that is not deployed, and one other than the deployment the route serves, with 404', () => {
      for (const refused of [
        () => t.service.deploymentFor('gamma'),
        () => t.service.deploymentFor('alpha', t.registry.require('beta')),
      ]) {
        const error = thrown(refused);
        expect(error).toBeInstanceOf(OpenAiHttpError);
        expect(error).toMatchObject({ status: 404, code: ErrorCode.modelNotFound, param: 'model' });
      }
    });
  });

  describe('refused requests', () => {
    it('queues nothing for a model that is not deployed (404)', async () => {
      expect(await rejection(t.request('gamma'))).toMatchObject({ status: 404, code: ErrorCode.modelNotFound });
      t.expectNothingQueued();
    });

    it("queues nothing for a model other than the route's own deployment (404)", async () => {
      expect(await rejection(t.request('alpha', t.registry.require('beta')))).toMatchObject({
        status: 404,
        code: ErrorCode.modelNotFound,
      });
      t.expectNothingQueued();
    });

    it('refuses with 429 and Retry-After once the queue is full, queueing nothing more', async () => {
      for (let i = 0; i < MAX_QUEUE_DEPTH; i++) await t.request('alpha');
      expect(t.queue.enqueued).toHaveLength(MAX_QUEUE_DEPTH);
      const error = (await rejection(t.request('alpha'))) as OpenAiHttpError;
      expect(error).toBeInstanceOf(OpenAiHttpError);
      expect(error.status).toBe(429);
      expect(error.type).toBe('rate_limit_error');
      expect(error.code).toBe(ErrorCode.queueFull);
      expect(error.headers).toEqual({ 'retry-after': '1' });
      expect(error.message).toContain(`(${MAX_QUEUE_DEPTH} requests waiting)`);
      expect(t.built).toHaveLength(MAX_QUEUE_DEPTH);
      expect(t.queue.enqueued).toHaveLength(MAX_QUEUE_DEPTH);
      expect(t.relay.subscribed).toHaveLength(MAX_QUEUE_DEPTH);
      // Another deployment's queue is not this one's.
      await expect(t.request('beta')).resolves.toBeDefined();
    });

    it("asks for a place as the caller's key, and says when the free places are held for other keys", async () => {
      await t.request('alpha', undefined, undefined, 'team-a');
      // With authentication off, there is one caller and nothing to share.
      await t.request('alpha');
      expect(t.admission.askers).toEqual([{ name: 'team-a', weight: 1 }, undefined]);
      t.admission.heldForOthers = { held: 1, share: 1 };
      const error = (await rejection(t.request('alpha', undefined, undefined, 'team-a'))) as OpenAiHttpError;
      expect(error).toMatchObject({ status: 429, code: ErrorCode.queueFull, headers: { 'retry-after': '1' } });
      expect(error.message).toContain(
        'held for other API keys: this key holds 1 of the 2 places taken, its weighted share being 1',
      );
      expect(t.queue.enqueued).toHaveLength(2);
    });

    it('refuses with 503 at once while the queue is unreachable, queueing nothing', async () => {
      t.queue.reachable = false;
      expect(await rejection(t.request('alpha'))).toMatchObject({ status: 503, code: ErrorCode.serviceUnavailable });
      t.expectNothingQueued();
    });

    it('refuses with 503 when the backlog cannot be read, queueing nothing', async () => {
      t.queue.backlogFailure = new Error('Connection is closed.');
      expect(await rejection(t.request('alpha'))).toMatchObject({ status: 503, code: ErrorCode.serviceUnavailable });
      t.expectNothingQueued();
    });

    it('refuses with 503 when the job cannot be queued, and stops following its reply', async () => {
      t.queue.enqueueFailure = new Error('Connection is closed.');
      const error = (await rejection(t.request('alpha'))) as OpenAiHttpError;
      expect(error.status).toBe(503);
      expect(error.code).toBe(ErrorCode.serviceUnavailable);
      expect(error.message).toContain('Connection is closed.');
      expect(t.queue.enqueued).toEqual([]);
      expect(t.relay.subscribed).toHaveLength(1);
      expect(t.relay.open).toBe(0);
    });
  });

  describe('jobs Redis lost', () => {
    it('enqueues again, under the same id, a job Redis came back without before any worker ran it', async () => {
      const run = await t.request('alpha');
      const requestId = requestIdOf(run);
      const kept = await t.request('alpha');
      t.queue.lose(requestId);
      t.queue.reconnect();
      await t.followed.recover();
      expect(t.queue.enqueued.map((j) => j.requestId)).toEqual([requestId, requestIdOf(kept), requestId]);
      expect(t.queue.enqueued[2]).toBe(t.queue.enqueued[0]);
      expect(t.queue.isWaiting(requestId)).toBe(true);
      // Its reply is still followed: a worker running the job now answers the waiting client.
      t.relay.write(keyOf(requestId), [start, delta('Hi', 1), end(2)]);
      expect(await drain(run.events)).toEqual([start, delta('Hi', 1), end(2)]);
      expect(t.followed.size).toBe(1);
    });

    it('ends with a retryable 503 a reply whose job is gone after its reply began, and cancels it', async () => {
      const run = await t.request('alpha');
      const requestId = requestIdOf(run);
      t.queue.take(requestId);
      t.relay.write(keyOf(requestId), [start, delta('Hel', 1)]);
      expect((await run.events.next()).value).toEqual(start);
      expect((await run.events.next()).value).toEqual(delta('Hel', 1));
      t.queue.lose(requestId);
      t.queue.reconnect();
      await t.followed.recover();
      const error = (await rejection(run.events.next())) as OpenAiHttpError;
      expect(error).toMatchObject({ status: 503, code: ErrorCode.serviceUnavailable, headers: { 'retry-after': '1' } });
      expect(t.queue.enqueued).toHaveLength(1);
      expect(t.queue.cancelled).toEqual([{ deployment: 'alpha', requestId }]);
      expect(t.followed.size).toBe(0);
    });

    it('does not put back a job withdrawn at the queue deadline', async () => {
      const run = await t.request('alpha');
      const pending = rejection(run.events.next());
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS);
      expect(await pending).toMatchObject({ status: 503 });
      t.queue.reconnect();
      await t.followed.recover();
      expect(t.queue.enqueued).toHaveLength(1);
      expect(t.followed.size).toBe(0);
    });

    it('stops following a reply once it ends', async () => {
      const run = await t.request('alpha');
      t.relay.write(keyOf(requestIdOf(run)), [start, end(1)]);
      await drain(run.events);
      expect(t.followed.size).toBe(0);
    });
  });
});
