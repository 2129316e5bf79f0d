import { describe, expect, it, jest } from '@jest/globals';
import type { DeploymentConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import type { DecodedImage } from '@conveyor/protocol';
import type { GenerationJobData, ImageRef } from '@conveyor/queue';
import { ClientGone } from './reply-reader.js';
import {
  OPTIONS,
  QUEUE_TIMEOUT_MS,
  keyOf,
  requestIdOf,
  start,
  useGenerationHarness,
} from '../../../../test/support/generation-service.js';
import { rejection } from '../../../../test/support/rejection.js';

describe('GenerationService', () => {
  const t = useGenerationHarness();

  describe('images', () => {
    const ref: ImageRef = { sha256: 'a'.repeat(64), mime: 'image/png', bytes: 3, width: 1, height: 1 };
    const image: DecodedImage = { ref, data: Buffer.from([1, 2, 3]) };
    const withImage =
      (deployment: DeploymentConfig) =>
      (requestId: string, now: number): GenerationJobData => ({
        ...t.builderFor(deployment)(requestId, now),
        messages: [{ role: 'user', content: 'What is it?', parts: [{ type: 'image', image: ref }] }],
      });
    const imageRequest = (model = 'alpha') => {
      const deployment = t.service.deploymentFor(model);
      return t.service.submit(deployment, withImage(deployment), t.client.signal, { ...OPTIONS, images: [image] });
    };

    it('stores the images under the job before it is queued; the job carries their references only', async () => {
      const run = await imageRequest();
      const requestId = requestIdOf(run);
      expect(t.images.steps).toEqual([`hold ${requestId} ${ref.sha256}`]);
      expect(JSON.stringify(t.queue.enqueued[0])).not.toContain('"data"');
      expect((t.queue.enqueued[0] as GenerationJobData).messages[0]!.parts).toEqual([{ type: 'image', image: ref }]);
    });

    it('stores nothing for a request refused before queueing', async () => {
      await t.request('alpha');
      await t.request('alpha');
      await t.request('alpha');
      expect(await rejection(imageRequest())).toMatchObject({ status: 429 });
      expect(t.images.steps).toEqual([]);
    });

    it('releases the images of a job that could not be queued', async () => {
      t.queue.enqueueFailure = new Error('Connection is closed.');
      expect(await rejection(imageRequest())).toMatchObject({ status: 503 });
      expect(t.images.steps).toHaveLength(2);
      expect(t.images.steps[1]).toMatch(/^release /);
      expect(t.images.jobs.size).toBe(0);
    });

    it('releases the images of a job withdrawn at the queue deadline', async () => {
      const run = await imageRequest();
      const pending = rejection(run.events.next());
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS);
      expect(await pending).toMatchObject({ status: 503 });
      expect(t.images.steps.at(-1)).toBe(`release ${requestIdOf(run)} ${ref.sha256}`);
      expect(t.images.jobs.size).toBe(0);
    });

    it('releases the images of a job its client left while it waited, and leaves a running one to its worker', async () => {
      const waiting = await imageRequest();
      const pending = rejection(waiting.events.next());
      t.client.abort();
      expect(await pending).toBeInstanceOf(ClientGone);
      expect(t.images.steps.at(-1)).toBe(`release ${requestIdOf(waiting)} ${ref.sha256}`);

      t.client = new AbortController();
      const running = await imageRequest();
      const requestId = requestIdOf(running);
      t.queue.take(requestId);
      t.relay.write(keyOf(requestId), [start]);
      await running.events.next();
      const gone = rejection(running.events.next());
      t.client.abort();
      expect(await gone).toBeInstanceOf(ClientGone);
      expect(t.queue.cancelled.map((c) => c.requestId)).toContain(requestId);
      expect(t.images.jobs.get(ref.sha256)).toEqual(new Set([requestId]));
    });

    it('ends with a retryable 503, rather than queueing again, a job Redis lost with the images it refers to', async () => {
      const run = await imageRequest();
      const requestId = requestIdOf(run);
      t.queue.lose(requestId);
      t.queue.reconnect();
      await t.followed.recover();
      expect(await rejection(run.events.next())).toMatchObject({ status: 503, code: ErrorCode.serviceUnavailable });
      expect(t.queue.enqueued).toHaveLength(1);
    });
  });
});
