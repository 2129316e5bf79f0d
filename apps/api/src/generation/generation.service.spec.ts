import { afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { ErrorCode } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { drain } from '../../../../test/support/drain.js';
import {
  MAX_QUEUE_DEPTH,
  QUEUE_TIMEOUT_MS,
  delta,
  end,
  generationHarness,
  keyOf,
  requestIdOf,
  start,
  type GenerationHarness,
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

beforeAll(() => {
  // The service logs every request; the tests read its effects, not its log lines.
  Logger.overrideLogger(false);
});

describe('GenerationService', () => {
  let registry: GenerationHarness['registry'];
  let queue: GenerationHarness['queue'];
  let relay: GenerationHarness['relay'];
  let service: GenerationHarness['service'];
  let built: GenerationHarness['built'];
  let request: GenerationHarness['request'];
  let expectNothingQueued: GenerationHarness['expectNothingQueued'];
  let client: AbortController;

  beforeEach(() => {
    // The deadlines are timers: fake ones, so no test waits for one.
    jest.useFakeTimers();
    client = new AbortController();
    ({ registry, queue, relay, service, built, request, expectNothingQueued } = generationHarness(() => client.signal));
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  describe('deploymentFor', () => {
    it('is the deployment the model names', () => {
      expect(service.deploymentFor('beta').id).toBe('beta');
      expect(service.deploymentFor('beta', registry.require('beta')).id).toBe('beta');
    });

    it('refuses a model that is not deployed, and one other than the deployment the route serves, with 404', () => {
      for (const refused of [
        () => service.deploymentFor('gamma'),
        () => service.deploymentFor('alpha', registry.require('beta')),
      ]) {
        const error = thrown(refused);
        expect(error).toBeInstanceOf(OpenAiHttpError);
        expect(error).toMatchObject({ status: 404, code: ErrorCode.modelNotFound, param: 'model' });
      }
    });
  });

  describe('refused requests', () => {
    it('queues nothing for a model that is not deployed (404)', async () => {
      expect(await rejection(request('gamma'))).toMatchObject({ status: 404, code: ErrorCode.modelNotFound });
      expectNothingQueued();
    });

    it("queues nothing for a model other than the route's own deployment (404)", async () => {
      expect(await rejection(request('alpha', registry.require('beta')))).toMatchObject({
        status: 404,
        code: ErrorCode.modelNotFound,
      });
      expectNothingQueued();
    });

    it('refuses with 429 and Retry-After once the queue is full, queueing nothing more', async () => {
      for (let i = 0; i < MAX_QUEUE_DEPTH; i++) await request('alpha');
      expect(queue.enqueued).toHaveLength(MAX_QUEUE_DEPTH);
      const error = (await rejection(request('alpha'))) as OpenAiHttpError;
      expect(error).toBeInstanceOf(OpenAiHttpError);
      expect(error.status).toBe(429);
      expect(error.type).toBe('rate_limit_error');
      expect(error.code).toBe(ErrorCode.queueFull);
      expect(error.headers).toEqual({ 'retry-after': '1' });
      expect(error.message).toContain(`(${MAX_QUEUE_DEPTH} requests waiting)`);
      expect(built).toHaveLength(MAX_QUEUE_DEPTH);
      expect(queue.enqueued).toHaveLength(MAX_QUEUE_DEPTH);
      expect(relay.subscribed).toHaveLength(MAX_QUEUE_DEPTH);
      // Another deployment's queue is not this one's.
      await expect(request('beta')).resolves.toBeDefined();
    });

    it('refuses with 503 at once while the queue is unreachable, queueing nothing', async () => {
      queue.reachable = false;
      expect(await rejection(request('alpha'))).toMatchObject({ status: 503, code: ErrorCode.serviceUnavailable });
      expectNothingQueued();
    });

    it('refuses with 503 when the backlog cannot be read, queueing nothing', async () => {
      queue.backlogFailure = new Error('Connection is closed.');
      expect(await rejection(request('alpha'))).toMatchObject({ status: 503, code: ErrorCode.serviceUnavailable });
      expectNothingQueued();
    });

    it('refuses with 503 when the job cannot be queued, and stops following its reply', async () => {
      queue.enqueueFailure = new Error('Connection is closed.');
      const error = (await rejection(request('alpha'))) as OpenAiHttpError;
      expect(error.status).toBe(503);
      expect(error.code).toBe(ErrorCode.serviceUnavailable);
      expect(error.message).toContain('Connection is closed.');
      expect(queue.enqueued).toEqual([]);
      expect(relay.subscribed).toHaveLength(1);
      expect(relay.open).toBe(0);
    });
  });

  describe('jobs Redis lost', () => {
    it('enqueues again, under the same id, a job Redis came back without before any worker ran it', async () => {
      const run = await request('alpha');
      const requestId = requestIdOf(run);
      const kept = await request('alpha');
      queue.lose(requestId);
      queue.reconnect();
      await service.followed.recover();
      expect(queue.enqueued.map((j) => j.requestId)).toEqual([requestId, requestIdOf(kept), requestId]);
      expect(queue.enqueued[2]).toBe(queue.enqueued[0]);
      expect(queue.isWaiting(requestId)).toBe(true);
      // Its reply is still followed: a worker running the job now answers the waiting client.
      relay.write(keyOf(requestId), [start, delta('Hi', 1), end(2)]);
      expect(await drain(run.events)).toEqual([start, delta('Hi', 1), end(2)]);
      expect(service.followed.size).toBe(1);
    });

    it('ends with a retryable 503 a reply whose job is gone after its reply began, and cancels it', async () => {
      const run = await request('alpha');
      const requestId = requestIdOf(run);
      queue.take(requestId);
      relay.write(keyOf(requestId), [start, delta('Hel', 1)]);
      expect((await run.events.next()).value).toEqual(start);
      expect((await run.events.next()).value).toEqual(delta('Hel', 1));
      queue.lose(requestId);
      queue.reconnect();
      await service.followed.recover();
      const error = (await rejection(run.events.next())) as OpenAiHttpError;
      expect(error).toMatchObject({ status: 503, code: ErrorCode.serviceUnavailable, headers: { 'retry-after': '1' } });
      expect(queue.enqueued).toHaveLength(1);
      expect(queue.cancelled).toEqual([{ deployment: 'alpha', requestId }]);
      expect(service.followed.size).toBe(0);
    });

    it('does not put back a job withdrawn at the queue deadline', async () => {
      const run = await request('alpha');
      const pending = rejection(run.events.next());
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS);
      expect(await pending).toMatchObject({ status: 503 });
      queue.reconnect();
      await service.followed.recover();
      expect(queue.enqueued).toHaveLength(1);
      expect(service.followed.size).toBe(0);
    });

    it('stops following a reply once it ends', async () => {
      const run = await request('alpha');
      relay.write(keyOf(requestIdOf(run)), [start, end(1)]);
      await drain(run.events);
      expect(service.followed.size).toBe(0);
    });
  });
});
