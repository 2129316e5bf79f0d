import { afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { DeploymentConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import type { DecodedImage } from '@conveyor/protocol';
import type { GenerationJobData, ImageRef } from '@conveyor/queue';
import { ClientGone } from './reply-reader.js';
import {
  OPTIONS,
  QUEUE_TIMEOUT_MS,
  generationHarness,
  keyOf,
  requestIdOf,
  start,
  type GenerationHarness,
} from '../../../../test/support/generation-service.js';
import { rejection } from '../../../../test/support/rejection.js';

beforeAll(() => {
  // The service logs every request; the tests read its effects, not its log lines.
  Logger.overrideLogger(false);
});

describe('GenerationService', () => {
  let queue: GenerationHarness['queue'];
  let relay: GenerationHarness['relay'];
  let service: GenerationHarness['service'];
  let images: GenerationHarness['images'];
  let builderFor: GenerationHarness['builderFor'];
  let request: GenerationHarness['request'];
  let client: AbortController;

  beforeEach(() => {
    // The deadlines are timers: fake ones, so no test waits for one.
    jest.useFakeTimers();
    client = new AbortController();
    ({ queue, relay, service, images, builderFor, request } = generationHarness(() => client.signal));
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  describe('images', () => {
    const ref: ImageRef = { sha256: 'a'.repeat(64), mime: 'image/png', bytes: 3, width: 1, height: 1 };
    const image: DecodedImage = { ref, data: Buffer.from([1, 2, 3]) };
    const withImage =
      (deployment: DeploymentConfig) =>
      (requestId: string, now: number): GenerationJobData => ({
        ...builderFor(deployment)(requestId, now),
        messages: [{ role: 'user', content: 'What is it?', parts: [{ type: 'image', image: ref }] }],
      });
    const imageRequest = (model = 'alpha') => {
      const deployment = service.deploymentFor(model);
      return service.submit(deployment, withImage(deployment), client.signal, { ...OPTIONS, images: [image] });
    };

    it('stores the images under the job before it is queued; the job carries their references only', async () => {
      const run = await imageRequest();
      const requestId = requestIdOf(run);
      expect(images.steps).toEqual([`hold ${requestId} ${ref.sha256}`]);
      expect(JSON.stringify(queue.enqueued[0])).not.toContain('"data"');
      expect((queue.enqueued[0] as GenerationJobData).messages[0]!.parts).toEqual([{ type: 'image', image: ref }]);
    });

    it('stores nothing for a request refused before queueing', async () => {
      await request('alpha');
      await request('alpha');
      await request('alpha');
      expect(await rejection(imageRequest())).toMatchObject({ status: 429 });
      expect(images.steps).toEqual([]);
    });

    it('releases the images of a job that could not be queued', async () => {
      queue.enqueueFailure = new Error('Connection is closed.');
      expect(await rejection(imageRequest())).toMatchObject({ status: 503 });
      expect(images.steps).toHaveLength(2);
      expect(images.steps[1]).toMatch(/^release /);
      expect(images.jobs.size).toBe(0);
    });

    it('releases the images of a job withdrawn at the queue deadline', async () => {
      const run = await imageRequest();
      const pending = rejection(run.events.next());
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS);
      expect(await pending).toMatchObject({ status: 503 });
      expect(images.steps.at(-1)).toBe(`release ${requestIdOf(run)} ${ref.sha256}`);
      expect(images.jobs.size).toBe(0);
    });

    it('releases the images of a job its client left while it waited, and leaves a running one to its worker', async () => {
      const waiting = await imageRequest();
      const pending = rejection(waiting.events.next());
      client.abort();
      expect(await pending).toBeInstanceOf(ClientGone);
      expect(images.steps.at(-1)).toBe(`release ${requestIdOf(waiting)} ${ref.sha256}`);

      client = new AbortController();
      const running = await imageRequest();
      const requestId = requestIdOf(running);
      queue.take(requestId);
      relay.write(keyOf(requestId), [start]);
      await running.events.next();
      const gone = rejection(running.events.next());
      client.abort();
      expect(await gone).toBeInstanceOf(ClientGone);
      expect(queue.cancelled.map((c) => c.requestId)).toContain(requestId);
      expect(images.jobs.get(ref.sha256)).toEqual(new Set([requestId]));
    });

    it('ends with a retryable 503, rather than queueing again, a job Redis lost with the images it refers to', async () => {
      const run = await imageRequest();
      const requestId = requestIdOf(run);
      queue.lose(requestId);
      queue.reconnect();
      await service.followed.recover();
      expect(await rejection(run.events.next())).toMatchObject({ status: 503, code: ErrorCode.serviceUnavailable });
      expect(queue.enqueued).toHaveLength(1);
    });
  });
});
