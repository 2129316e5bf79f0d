import { describe, expect, it } from '@jest/globals';
import { UnrecoverableError, WaitingError } from 'bullmq';
import { EngineInputError } from '@conveyor/engine';
import { STOP } from '../cancel/cancellation-tracker.port.js';
import {
  BATCH,
  REQUEST_ID,
  USAGE,
  chatJob,
  finished,
  jobOf,
  saying,
  untilStopped,
  useProcessorWithStandIns,
} from '../../../../test/support/generation-processor.js';
import { rejection } from '../../../../test/support/rejection.js';

/** What a batch is told of a line that failed for good with a 500. */
const failedLine = (model: string, message: string) => ({
  batchId: BATCH.batchId,
  result: {
    ok: false,
    customId: BATCH.customId,
    line: BATCH.line,
    requestId: REQUEST_ID,
    model,
    status: 500,
    code: 'generation_failed',
    message,
  },
});

describe('GenerationProcessor', () => {
  const t = useProcessorWithStandIns();

  describe('a batch line', () => {
    it('hands the whole reply to its batch as one result, publishing nothing', async () => {
      t.engine.generation = saying('Hel', 'lo');
      const { job } = jobOf(chatJob({ batch: BATCH }));
      expect(await t.processor.handle(job, 'token-1', undefined)).toEqual({ finishReason: 'stop', usage: USAGE });
      expect(t.batchResults.pushed).toEqual([
        {
          batchId: BATCH.batchId,
          result: {
            ok: true,
            customId: BATCH.customId,
            line: BATCH.line,
            requestId: REQUEST_ID,
            model: 'alpha',
            reply: { choices: [{ index: 0, text: 'Hello', finishReason: 'stop' }], usage: USAGE },
          },
        },
      ]);
      expect(t.publishers.opened).toEqual([]);
      expect(t.cancellation.tracked).toEqual([]);
    });

    it('reports a failure once, on its last attempt', async () => {
      const boom = new Error('the context is gone');
      t.engine.generation = async () => {
        throw boom;
      };
      const first = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 1, attempts: 2 });
      expect(await rejection(t.processor.handle(first.job, 'token-1', undefined))).toBe(boom);
      expect(t.batchResults.pushed).toEqual([]);

      const last = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 2, attempts: 2 });
      expect(await rejection(t.processor.handle(last.job, 'token-2', undefined))).toBe(boom);
      expect(t.batchResults.pushed).toEqual([failedLine('alpha', 'Generation failed: the context is gone')]);
    });

    it('reports input no retry can fix as a 400 on its first attempt and fails the job for good', async () => {
      t.engine.generation = async () => {
        throw new EngineInputError('Too long.', 'context_length_exceeded');
      };
      const { job } = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 1, attempts: 2 });
      expect(await rejection(t.processor.handle(job, 'token-1', undefined))).toBeInstanceOf(UnrecoverableError);
      expect(t.batchResults.pushed.map((p) => p.result)).toEqual([
        expect.objectContaining({ ok: false, status: 400, code: 'context_length_exceeded', message: 'Too long.' }),
      ]);
    });

    it('hands its batch every choice whole: reasoning, text, tool calls and each finish reason', async () => {
      t.engine.generation = async (_request, { onStart, onOutput }) => {
        onStart(5);
        onOutput({ choice: 0, reasoning: 'hm' });
        onOutput({ choice: 1, text: 'b', tokens: 1 });
        onOutput({ choice: 0, text: 'a' });
        onOutput({ choice: 0, toolCall: { index: 0, id: 'call_1', name: 'f', arguments: '{"x":' } });
        onOutput({ choice: 0, toolCall: { index: 0, arguments: '1}' } });
        return { ...finished('tool_calls'), finishReasons: ['tool_calls', 'length'] };
      };
      await t.processor.handle(jobOf(chatJob({ batch: BATCH, n: 2 })).job, 'token-1', undefined);
      expect(t.batchResults.pushed.map((p) => p.result)).toEqual([
        expect.objectContaining({
          ok: true,
          reply: {
            choices: [
              {
                index: 0,
                text: 'a',
                reasoning: 'hm',
                toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"x":1}' }],
                finishReason: 'tool_calls',
              },
              { index: 1, text: 'b', finishReason: 'length' },
            ],
            usage: USAGE,
          },
        }),
      ]);
    });

    it('starts a retried line over: no client was sent any of it', async () => {
      // Whatever a reply stream under the same id holds is no part of the line.
      t.publishers.sent.set(REQUEST_ID, { text: 'Hello', tokens: 2, ended: true });
      t.engine.generation = saying('Hi');
      const { job } = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 2, attempts: 2 });
      expect(await t.processor.handle(job, 'token-2', undefined)).toEqual({ finishReason: 'stop', usage: USAGE });
      expect(t.engine.requests).toHaveLength(1);
      expect(t.engine.requests[0].continueFrom).toBeUndefined();
      expect(t.batchResults.pushed.map((p) => p.result)).toEqual([
        expect.objectContaining({
          ok: true,
          reply: { choices: [{ index: 0, text: 'Hi', finishReason: 'stop' }], usage: USAGE },
        }),
      ]);
      expect(t.publishers.opened).toEqual([]);
    });

    it('reports nothing when another worker took the line over, even on its last attempt', async () => {
      const { generation, started } = untilStopped('par');
      t.engine.generation = generation;
      const { job } = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 2, attempts: 2 });
      const handled = rejection(t.processor.handle(job, 'token-1', undefined));
      await started;
      t.cancellation.stop(STOP.lostLock);
      expect((await handled) as Error).not.toBeInstanceOf(UnrecoverableError);
      // The other worker's run writes the line; a failure here would be written in its place.
      expect(t.batchResults.pushed).toEqual([]);
    });

    it('reports a line stopped for good (its job cancelled) once, on its first attempt', async () => {
      const jobSignal = new AbortController();
      const { generation, started } = untilStopped('par');
      t.engine.generation = generation;
      const { job } = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 1, attempts: 2 });
      const handled = rejection(t.processor.handle(job, 'token-1', jobSignal.signal));
      await started;
      jobSignal.abort();
      expect(await handled).toBeInstanceOf(UnrecoverableError);
      // The job fails for good: its batch hears of it now, from the worker that ran it.
      expect(t.batchResults.pushed.map((p) => p.result)).toEqual([
        expect.objectContaining({
          ok: false,
          status: 500,
          code: 'generation_failed',
          message: 'Generation failed: The request was cancelled by the client.',
        }),
      ]);
    });

    it('reports a line of a deployment this worker does not serve to its batch', async () => {
      const { job } = jobOf(chatJob({ batch: BATCH, deployment: 'elsewhere' }), { attemptsStarted: 1, attempts: 2 });
      expect(await rejection(t.processor.handle(job, 'token-1', undefined))).toBeInstanceOf(UnrecoverableError);
      expect(t.batchResults.pushed).toEqual([
        failedLine('elsewhere', 'Generation failed: This worker does not serve deployment "elsewhere".'),
      ]);
      expect(t.publishers.opened).toEqual([]);
    });

    it('hands the line back to the queue, reporting nothing, when the worker shuts down', async () => {
      const { generation, started } = untilStopped('par');
      t.engine.generation = generation;
      const { job, movedToWait } = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 2, attempts: 2 });
      const handled = rejection(t.processor.handle(job, 'token-9', undefined));
      await started;
      t.cancellation.stop(STOP.shutdown);
      expect(await handled).toBeInstanceOf(WaitingError);
      expect(movedToWait).toEqual(['token-9']);
      expect(t.batchResults.pushed).toEqual([]);
    });
  });
});
