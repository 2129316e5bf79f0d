import { describe, expect, it } from '@jest/globals';
import { UnrecoverableError, WaitingError } from 'bullmq';
import { EngineInputError } from '@conveyor/engine';
import { promptBlockHashes, type GenerationJobData } from '@conveyor/queue';
import { STOP } from '../cancel/cancellation-tracker.port.js';
import {
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

describe('GenerationProcessor', () => {
  const t = useProcessorWithStandIns();

  describe('a chat reply', () => {
    it('publishes its start, each piece and its end in order, and returns the result', async () => {
      t.engine.generation = saying('Hel', 'lo');
      const data = chatJob();
      const { job } = jobOf(data);
      expect(await t.processor.handle(job, 'token-1', undefined)).toEqual({ finishReason: 'stop', usage: USAGE });
      expect(t.publishers.opened.map(({ requestId, attempt }) => ({ requestId, attempt }))).toEqual([
        { requestId: REQUEST_ID, attempt: 1 },
      ]);
      expect(t.publishers.events(REQUEST_ID)).toEqual([
        { type: 'start', promptTokens: 5, resumed: false },
        { type: 'output', piece: { choice: 0, text: 'Hel' } },
        { type: 'output', piece: { choice: 0, text: 'lo' } },
        { type: 'end', finishReasons: ['stop'], usage: USAGE },
      ]);
      // The engine got the job's input, with the tracked signal, and nothing to continue.
      expect(t.engine.requests).toHaveLength(1);
      expect(t.engine.requests[0]).toMatchObject({ messages: data.messages, sampling: data.sampling, stop: [] });
      expect(t.engine.requests[0].continueFrom).toBeUndefined();
      expect(t.engine.requests[0].signal).toBeInstanceOf(AbortSignal);
      expect(t.cancellation.tracked).toEqual([]);
    });

    it('tells the router what each sequence now holds: the prompt and that choice’s reply', async () => {
      const long = 'Sort the tickets by topic. '.repeat(60);
      t.engine.generation = async (_request, { onStart, onOutput }) => {
        onStart(5);
        onOutput({ choice: 0, text: 'billing' });
        onOutput({ choice: 1, text: 'bugs' });
        return { ...finished('stop'), finishReasons: ['stop', 'stop'], sequences: [3, 1] };
      };
      const data = chatJob({ messages: [{ role: 'user', content: long }], n: 2 });
      await t.processor.handle(jobOf(data).job, 'token-1', undefined);
      expect(t.routes.records).toEqual([
        {
          deployment: 'alpha',
          sequences: [3, 1],
          chains: [promptBlockHashes(data, 'billing'), promptBlockHashes(data, 'bugs')],
        },
      ]);
      expect(t.routes.records[0]!.chains[0]!.length).toBeGreaterThan(0);
    });

    it('numbers its attempts on from those a job had in the queue it was sent on from', async () => {
      t.publishers.sent.set(REQUEST_ID, { text: '', tokens: 0, ended: false });
      t.engine.generation = saying('hi');
      await t.processor.handle(jobOf(chatJob({ attemptBase: 2 })).job, 'token-1', undefined);
      expect(t.publishers.opened.map((o) => o.attempt)).toEqual([3]);
    });

    it('publishes every choice’s finish reason at the end', async () => {
      t.engine.generation = async (_request, { onStart, onOutput }) => {
        onStart(5);
        onOutput({ choice: 1, text: 'b' });
        onOutput({ choice: 0, text: 'a' });
        return { finishReason: 'length', finishReasons: ['length', 'stop'], usage: USAGE, aborted: false };
      };
      const { job } = jobOf(chatJob({ n: 2 }));
      expect(await t.processor.handle(job, 'token-1', undefined)).toEqual({ finishReason: 'length', usage: USAGE });
      expect(t.publishers.events(REQUEST_ID).at(-1)).toEqual({
        type: 'end',
        finishReasons: ['length', 'stop'],
        usage: USAGE,
      });
    });

    it('continues, in a retried attempt, the text the client was already sent', async () => {
      t.publishers.sent.set(REQUEST_ID, { text: 'Hello', tokens: 2, ended: false });
      t.engine.generation = saying(', world');
      const { job } = jobOf(chatJob(), { attemptsStarted: 2 });
      await t.processor.handle(job, 'token-2', undefined);
      // The tokens sent come from the reply stream, as they were generated: never a re-tokenization.
      expect(t.engine.requests[0].continueFrom).toEqual({ text: 'Hello', tokens: 2 });
      expect(t.publishers.opened.map((o) => o.attempt)).toEqual([2]);
      expect(t.publishers.events(REQUEST_ID)).toEqual([
        { type: 'start', promptTokens: 5, resumed: true },
        { type: 'output', piece: { choice: 0, text: ', world' } },
        { type: 'end', finishReasons: ['stop'], usage: USAGE },
      ]);
    });

    it('starts a retried reply over when it cannot be continued from its text alone', async () => {
      const cases: { data: GenerationJobData; continues: boolean }[] = [
        { data: chatJob({ n: 2 }), continues: true },
        { data: chatJob({ tools: [{ name: 'lookup' }] }), continues: true },
        { data: chatJob({ responseFormat: { type: 'json_object' } }), continues: true },
        { data: chatJob({ logprobs: 0 }), continues: true },
        { data: chatJob({ prompts: ['Once'] }), continues: true },
        // An engine that splits reasoning out of replies cannot continue one.
        { data: chatJob(), continues: false },
      ];
      for (const { data, continues } of cases) {
        t.publishers.sent.set(REQUEST_ID, { text: 'Hello', tokens: 2, ended: false });
        t.engine.continuesReplies = continues;
        t.engine.generation = saying('Hi');
        const { job } = jobOf(data, { attemptsStarted: 2 });
        await t.processor.handle(job, 'token-2', undefined);
        expect(t.engine.requests.at(-1)?.continueFrom).toBeUndefined();
        expect(t.publishers.opened.at(-1)?.publisher.events[0]).toEqual({
          type: 'start',
          promptTokens: 5,
          resumed: false,
        });
      }
    });

    it('returns without generating when an earlier attempt already ended the reply', async () => {
      t.publishers.sent.set(REQUEST_ID, { text: 'Hello', tokens: 2, ended: true });
      const { job } = jobOf(chatJob(), { attemptsStarted: 2 });
      expect(await t.processor.handle(job, 'token-2', undefined)).toEqual({
        finishReason: 'stop',
        usage: { promptTokens: 0, completionTokens: 0 },
      });
      expect(t.engine.requests).toEqual([]);
      expect(t.publishers.events(REQUEST_ID)).toEqual([]);
      expect(t.cancellation.tracked).toEqual([]);
    });

    it('reports input no retry can fix as a 400 and fails the job for good', async () => {
      t.engine.generation = async () => {
        throw new EngineInputError('The prompt is longer than the context.', 'context_length_exceeded');
      };
      const { job } = jobOf(chatJob());
      const error = await rejection(t.processor.handle(job, 'token-1', undefined));
      expect(error).toBeInstanceOf(UnrecoverableError);
      expect((error as Error).message).toBe('The prompt is longer than the context.');
      expect(t.publishers.events(REQUEST_ID)).toEqual([
        {
          type: 'fail',
          status: 400,
          code: 'context_length_exceeded',
          message: 'The prompt is longer than the context.',
        },
      ]);
      expect(t.cancellation.tracked).toEqual([]);
    });

    it('reports any other failure only on the last attempt, leaving earlier ones to the retry', async () => {
      const boom = new Error('the context is gone');
      t.engine.generation = async () => {
        throw boom;
      };
      const first = jobOf(chatJob(), { attemptsStarted: 1, attempts: 2 });
      expect(await rejection(t.processor.handle(first.job, 'token-1', undefined))).toBe(boom);
      expect(t.publishers.events(REQUEST_ID)).toEqual([]);

      const last = jobOf(chatJob(), { attemptsStarted: 2, attempts: 2 });
      expect(await rejection(t.processor.handle(last.job, 'token-2', undefined))).toBe(boom);
      expect(t.publishers.events(REQUEST_ID)).toEqual([
        { type: 'fail', status: 500, code: 'generation_failed', message: 'Generation failed: the context is gone' },
      ]);
      expect(t.cancellation.tracked).toEqual([]);
    });

    it('fails the job for good, ending no reply, when the client cancelled', async () => {
      const { generation, started } = untilStopped('par');
      t.engine.generation = generation;
      const { job, movedToWait } = jobOf(chatJob());
      const handled = rejection(t.processor.handle(job, 'token-1', undefined));
      await started;
      t.cancellation.stop(STOP.cancelled, [REQUEST_ID]);
      const error = await handled;
      expect(error).toBeInstanceOf(UnrecoverableError);
      expect((error as Error).message).toContain('cancelled by the client');
      expect(t.publishers.events(REQUEST_ID).some((e) => e.type === 'end')).toBe(false);
      expect(movedToWait).toEqual([]);
      expect(t.cancellation.tracked).toEqual([]);
    });

    it('stops a request whose client cancelled before its job started', async () => {
      t.cancellation.cancelledEarly.add(REQUEST_ID);
      t.engine.generation = untilStopped('par').generation;
      const { job } = jobOf(chatJob());
      expect(await rejection(t.processor.handle(job, 'token-1', undefined))).toBeInstanceOf(UnrecoverableError);
      expect(t.publishers.events(REQUEST_ID).some((e) => e.type === 'end')).toBe(false);
    });

    it('hands the job back to the queue, spending no attempt and reporting nothing, when the worker shuts down', async () => {
      const { generation, started } = untilStopped('par');
      t.engine.generation = generation;
      // Even on the last attempt: the job is not failing, another worker continues it.
      const { job, movedToWait } = jobOf(chatJob(), { attemptsStarted: 2, attempts: 2 });
      const handled = rejection(t.processor.handle(job, 'token-7', undefined));
      await started;
      t.cancellation.stop(STOP.shutdown);
      expect(await handled).toBeInstanceOf(WaitingError);
      expect(movedToWait).toEqual(['token-7']);
      expect(t.publishers.events(REQUEST_ID).map((e) => e.type)).toEqual(['start', 'output']);
      expect(t.cancellation.tracked).toEqual([]);
    });

    it('refuses a job of a deployment this worker does not serve, telling its client why', async () => {
      const { job } = jobOf(chatJob({ deployment: 'elsewhere' }));
      expect(await rejection(t.processor.handle(job, 'token-1', undefined))).toBeInstanceOf(UnrecoverableError);
      expect(t.engine.requests).toEqual([]);
      // The worker reports every failure its handler sees, as it must for a batch line (see below).
      expect(t.publishers.events(REQUEST_ID)).toEqual([
        {
          type: 'fail',
          status: 500,
          code: 'generation_failed',
          message: 'Generation failed: This worker does not serve deployment "elsewhere".',
        },
      ]);
      expect(t.cancellation.tracked).toEqual([]);
    });

    it('reports nothing when another worker took the job over, even on its last attempt', async () => {
      const { generation, started } = untilStopped('par');
      t.engine.generation = generation;
      const { job, movedToWait } = jobOf(chatJob(), { attemptsStarted: 2, attempts: 2 });
      const handled = rejection(t.processor.handle(job, 'token-1', undefined));
      await started;
      t.cancellation.stop(STOP.lostLock);
      const error = await handled;
      expect(error).not.toBeInstanceOf(UnrecoverableError);
      expect((error as Error).message).toContain('taken over');
      // The reply is the other worker's to end: this attempt neither ends nor fails it.
      expect(t.publishers.events(REQUEST_ID).map((e) => e.type)).toEqual(['start', 'output']);
      expect(movedToWait).toEqual([]);
      expect(t.cancellation.tracked).toEqual([]);
    });
  });
});
