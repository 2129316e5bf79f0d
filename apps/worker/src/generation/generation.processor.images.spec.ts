import { describe, expect, it } from '@jest/globals';
import { EngineInputError } from '@conveyor/engine';
import type { GenerationJobData, ImageRef } from '@conveyor/queue';
import { STOP } from '../cancel/cancellation-tracker.port.js';
import {
  BATCH,
  REQUEST_ID,
  chatJob,
  jobOf,
  saying,
  untilStopped,
  useProcessorWithStandIns,
} from '../../../../test/support/generation-processor.js';
import { rejection } from '../../../../test/support/rejection.js';

describe('GenerationProcessor', () => {
  const t = useProcessorWithStandIns();

  describe('images', () => {
    const ref = (sha: string): ImageRef => ({
      sha256: sha.repeat(64),
      mime: 'image/png',
      bytes: 1,
      width: 1,
      height: 1,
    });
    // The same image twice, and another: each is released once.
    const withImages = (extra: Partial<GenerationJobData> = {}) =>
      chatJob({
        messages: [
          { role: 'user', content: 'a', parts: [{ type: 'image', image: ref('a') }] },
          {
            role: 'user',
            content: 'b',
            parts: [
              { type: 'image', image: ref('b') },
              { type: 'image', image: ref('a') },
            ],
          },
        ],
        ...extra,
      });
    const released = [{ jobId: REQUEST_ID, sha256s: ['a'.repeat(64), 'b'.repeat(64)] }];

    it('releases them once the reply is published, each image once', async () => {
      t.engine.generation = saying('Hi');
      await t.processor.handle(jobOf(withImages()).job, 'token-1', undefined);
      expect(t.releaser.released).toEqual(released);
    });

    it('releases them when the job fails for good: input no retry fixes, a cancel, the last attempt', async () => {
      t.engine.generation = async () => {
        throw new EngineInputError('too long', 'context_length_exceeded', 'messages');
      };
      await rejection(t.processor.handle(jobOf(withImages()).job, 'token-1', undefined));
      expect(t.releaser.released).toEqual(released);

      t.cancellation.cancelledEarly.add(REQUEST_ID);
      t.engine.generation = untilStopped('par').generation;
      await rejection(t.processor.handle(jobOf(withImages()).job, 'token-2', undefined));
      expect(t.releaser.released).toEqual([...released, ...released]);
      t.cancellation.cancelledEarly.clear();

      t.engine.generation = async () => {
        throw new Error('the context is gone');
      };
      await rejection(t.processor.handle(jobOf(withImages(), { attemptsStarted: 2 }).job, 'token-3', undefined));
      expect(t.releaser.released).toHaveLength(3);
    });

    it('keeps them for a job that runs again: an attempt left, handed back at shutdown, or taken over', async () => {
      t.engine.generation = async () => {
        throw new Error('the context is gone');
      };
      await rejection(t.processor.handle(jobOf(withImages(), { attemptsStarted: 1 }).job, 'token-1', undefined));

      for (const reason of [STOP.shutdown, STOP.lostLock]) {
        const { generation, started } = untilStopped('par');
        t.engine.generation = generation;
        const handled = rejection(
          t.processor.handle(jobOf(withImages(), { attemptsStarted: 2 }).job, 'token-2', undefined),
        );
        await started;
        t.cancellation.stop(reason);
        await handled;
      }
      expect(t.releaser.released).toEqual([]);
    });

    it('releases those of a batch line under its job id, as the batch stored them', async () => {
      t.engine.generation = saying('Hi');
      const lineJobId = `${BATCH.batchId}-${BATCH.line}`;
      await t.processor.handle(jobOf(withImages({ batch: BATCH, requestId: lineJobId })).job, 'token-1', undefined);
      expect(t.releaser.released).toEqual([{ jobId: lineJobId, sha256s: released[0]!.sha256s }]);
    });

    it('releases nothing for a job without images', async () => {
      t.engine.generation = saying('Hi');
      await t.processor.handle(jobOf(chatJob()).job, 'token-1', undefined);
      expect(t.releaser.released).toEqual([]);
    });
  });
});
