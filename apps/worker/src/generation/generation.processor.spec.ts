// One file for the processor's unit tests, replies and batch lines alike: they share the in-memory
// stand-ins for every port the processor drives, and each case reads best beside the others.
import { beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { UnrecoverableError, WaitingError, type Job } from 'bullmq';
import {
  EngineInputError,
  type GenerationEngine,
  type GenerateCallbacks,
  type GenerateRequest,
  type GenerateResult,
} from '@conveyor/engine';
import {
  promptBlockHashes,
  type BatchLineRef,
  type BatchLineResult,
  type FinishReason,
  type GenerationJobData,
  type ImageRef,
  type JobResult,
  type TokenUsage,
} from '@conveyor/queue';
import { BatchResultSink } from '../batch/batch-result-sink.port.js';
import { CancellationTracker, STOP, type StopReason } from '../cancel/cancellation-tracker.port.js';
import { EngineRegistry } from '../engine/engine-registry.js';
import { ImageReleaser } from '../images/image-releaser.port.js';
import { ReplySinks } from '../reply/reply-sinks.js';
import { PrefixRoutes } from '../routing/prefix-routes.port.js';
import { GenerationProcessor } from './generation.processor.js';
import { RecordingReplyStreams, REPLY_CONFIG } from '../../../../test/support/reply-streams.js';
import { rejection } from '../../../../test/support/rejection.js';

/** Cancels in memory: the test plays the API's cancel, the host's shutdown and a lost lock. */
class FakeCancellation extends CancellationTracker {
  private readonly running = new Map<string, AbortController>();
  /** Requests whose client cancelled before their job started. */
  readonly cancelledEarly = new Set<string>();

  track(requestId: string, linked?: AbortSignal): AbortSignal {
    const controller = new AbortController();
    linked?.addEventListener('abort', () => controller.abort(STOP.cancelled), { once: true });
    this.running.set(requestId, controller);
    return controller.signal;
  }

  abortIfCancelled(requestId: string): void {
    if (this.cancelledEarly.has(requestId)) this.running.get(requestId)?.abort(STOP.cancelled);
  }

  stop(reason: StopReason, requestIds?: readonly string[]): void {
    for (const [id, controller] of this.running) if (!requestIds || requestIds.includes(id)) controller.abort(reason);
  }

  untrack(requestId: string): void {
    this.running.delete(requestId);
  }

  get tracked(): string[] {
    return [...this.running.keys()];
  }
}

class FakeBatchResults extends BatchResultSink {
  readonly pushed: { batchId: string; result: BatchLineResult }[] = [];

  async push(batchId: string, result: BatchLineResult): Promise<void> {
    this.pushed.push({ batchId, result });
  }
}

class RecordingReleaser extends ImageReleaser {
  readonly released: { jobId: string; sha256s: readonly string[] }[] = [];

  async release(jobId: string, sha256s: readonly string[]): Promise<void> {
    this.released.push({ jobId, sha256s });
  }
}

class RecordingRoutes extends PrefixRoutes {
  readonly worker = 'host_1';
  readonly records: { deployment: string; sequences: readonly number[]; chains: readonly (readonly string[])[] }[] = [];

  held(deployment: string, sequences: readonly number[], chains: readonly (readonly string[])[]): void {
    this.records.push({ deployment, sequences, chains });
  }

  free(): void {}
}

type Generation = (request: GenerateRequest, callbacks: GenerateCallbacks) => Promise<GenerateResult>;

/** An engine that runs whatever generation the test gives it, and keeps every request it was given. */
class ScriptedEngine implements GenerationEngine {
  readonly requests: GenerateRequest[] = [];
  continuesReplies = true;
  generation: Generation = async () => finished('stop', 0);

  generate(request: GenerateRequest, callbacks: GenerateCallbacks): Promise<GenerateResult> {
    this.requests.push(request);
    return this.generation(request, callbacks);
  }

  async dispose(): Promise<void> {}
}

const USAGE: TokenUsage = { promptTokens: 5, completionTokens: 2 };

function finished(finishReason: FinishReason, completionTokens = 2): GenerateResult {
  return {
    finishReason,
    finishReasons: [finishReason],
    usage: { promptTokens: 5, completionTokens },
    aborted: false,
  };
}

/** A generation that says `texts`, then ends with `stop`. */
const saying =
  (...texts: string[]): Generation =>
  async (_request, { onStart, onOutput }) => {
    onStart(5);
    for (const text of texts) onOutput({ choice: 0, text });
    return finished('stop');
  };

/** The fields of a BullMQ job the processor reads. */
interface JobStandIn {
  data: GenerationJobData;
  attemptsStarted: number;
  attemptsMade: number;
  opts: { attempts?: number };
  moveToWait(token?: string): Promise<number>;
}

/** A job as BullMQ hands it to the processor, without a queue; records the tokens it was moved back to wait with. */
function jobOf(
  data: GenerationJobData,
  { attemptsStarted = 1, attempts = 2 }: { attemptsStarted?: number; attempts?: number } = {},
): { job: Job<GenerationJobData, JobResult>; movedToWait: (string | undefined)[] } {
  const movedToWait: (string | undefined)[] = [];
  const standIn: JobStandIn = {
    data,
    attemptsStarted,
    // BullMQ counts an attempt as made once it has failed or finished.
    attemptsMade: attemptsStarted - 1,
    opts: { attempts },
    moveToWait: async (token) => {
      movedToWait.push(token);
      return 0;
    },
  };
  return { job: standIn as unknown as Job<GenerationJobData, JobResult>, movedToWait };
}

const REQUEST_ID = '7d4c5a8e-2f1b-4e3a-9c6d-0a1b2c3d4e5f';

const chatJob = (extra: Partial<GenerationJobData> = {}): GenerationJobData => ({
  requestId: REQUEST_ID,
  deployment: 'alpha',
  messages: [{ role: 'user', content: 'Say hello' }],
  sampling: { temperature: 0 },
  stop: [],
  enqueuedAt: Date.now(),
  replyTo: 'replica-1',
  ...extra,
});

const BATCH: BatchLineRef = { batchId: 'batch_0123456789abcdef01234567', customId: 'line-a', line: 3 };

beforeAll(() => {
  // The processor logs every job; the tests read what it published and returned.
  Logger.overrideLogger(false);
});

describe('GenerationProcessor', () => {
  let engine: ScriptedEngine;
  let publishers: RecordingReplyStreams;
  let cancellation: FakeCancellation;
  let batchResults: FakeBatchResults;
  let routes: RecordingRoutes;
  let releaser: RecordingReleaser;
  let processor: GenerationProcessor;

  beforeEach(() => {
    engine = new ScriptedEngine();
    publishers = new RecordingReplyStreams();
    cancellation = new FakeCancellation();
    batchResults = new FakeBatchResults();
    const engines = new EngineRegistry(new Map([['alpha', engine]]), new Map());
    routes = new RecordingRoutes();
    releaser = new RecordingReleaser();
    processor = new GenerationProcessor(
      engines,
      new ReplySinks(REPLY_CONFIG, publishers, batchResults),
      cancellation,
      routes,
      releaser,
    );
  });

  /**
   * A generation that starts, says `text`, then runs until its signal fires and reports itself
   * aborted, as the engine does. `started` resolves once it is under way.
   */
  const untilStopped = (text: string) => {
    let resolveStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (resolveStarted = resolve));
    const generation: Generation = (request, { onStart, onOutput }) =>
      new Promise((resolve) => {
        onStart(5);
        onOutput({ choice: 0, text });
        const stopped = () => resolve({ ...finished('stop', 1), aborted: true });
        if (request.signal?.aborted) stopped();
        else request.signal?.addEventListener('abort', stopped, { once: true });
        resolveStarted();
      });
    return { generation, started };
  };

  describe('a chat reply', () => {
    it('publishes its start, each piece and its end in order, and returns the result', async () => {
      engine.generation = saying('Hel', 'lo');
      const data = chatJob();
      const { job } = jobOf(data);
      expect(await processor.handle(job, 'token-1', undefined)).toEqual({ finishReason: 'stop', usage: USAGE });
      expect(publishers.opened.map(({ requestId, attempt }) => ({ requestId, attempt }))).toEqual([
        { requestId: REQUEST_ID, attempt: 1 },
      ]);
      expect(publishers.events(REQUEST_ID)).toEqual([
        { type: 'start', promptTokens: 5, resumed: false },
        { type: 'output', piece: { choice: 0, text: 'Hel' } },
        { type: 'output', piece: { choice: 0, text: 'lo' } },
        { type: 'end', finishReasons: ['stop'], usage: USAGE },
      ]);
      // The engine got the job's input, with the tracked signal, and nothing to continue.
      expect(engine.requests).toHaveLength(1);
      expect(engine.requests[0]).toMatchObject({ messages: data.messages, sampling: data.sampling, stop: [] });
      expect(engine.requests[0].continueFrom).toBeUndefined();
      expect(engine.requests[0].signal).toBeInstanceOf(AbortSignal);
      expect(cancellation.tracked).toEqual([]);
    });

    it('tells the router what each sequence now holds: the prompt and that choice’s reply', async () => {
      const long = 'Sort the tickets by topic. '.repeat(60);
      engine.generation = async (_request, { onStart, onOutput }) => {
        onStart(5);
        onOutput({ choice: 0, text: 'billing' });
        onOutput({ choice: 1, text: 'bugs' });
        return { ...finished('stop'), finishReasons: ['stop', 'stop'], sequences: [3, 1] };
      };
      const data = chatJob({ messages: [{ role: 'user', content: long }], n: 2 });
      await processor.handle(jobOf(data).job, 'token-1', undefined);
      expect(routes.records).toEqual([
        {
          deployment: 'alpha',
          sequences: [3, 1],
          chains: [promptBlockHashes(data, 'billing'), promptBlockHashes(data, 'bugs')],
        },
      ]);
      expect(routes.records[0]!.chains[0]!.length).toBeGreaterThan(0);
    });

    it('numbers its attempts on from those a job had in the queue it was sent on from', async () => {
      publishers.sent.set(REQUEST_ID, { text: '', tokens: 0, ended: false });
      engine.generation = saying('hi');
      await processor.handle(jobOf(chatJob({ attemptBase: 2 })).job, 'token-1', undefined);
      expect(publishers.opened.map((o) => o.attempt)).toEqual([3]);
    });

    it('publishes every choice’s finish reason at the end', async () => {
      engine.generation = async (_request, { onStart, onOutput }) => {
        onStart(5);
        onOutput({ choice: 1, text: 'b' });
        onOutput({ choice: 0, text: 'a' });
        return { finishReason: 'length', finishReasons: ['length', 'stop'], usage: USAGE, aborted: false };
      };
      const { job } = jobOf(chatJob({ n: 2 }));
      expect(await processor.handle(job, 'token-1', undefined)).toEqual({ finishReason: 'length', usage: USAGE });
      expect(publishers.events(REQUEST_ID).at(-1)).toEqual({
        type: 'end',
        finishReasons: ['length', 'stop'],
        usage: USAGE,
      });
    });

    it('continues, in a retried attempt, the text the client was already sent', async () => {
      publishers.sent.set(REQUEST_ID, { text: 'Hello', tokens: 2, ended: false });
      engine.generation = saying(', world');
      const { job } = jobOf(chatJob(), { attemptsStarted: 2 });
      await processor.handle(job, 'token-2', undefined);
      // The tokens sent come from the reply stream, as they were generated: never a re-tokenization.
      expect(engine.requests[0].continueFrom).toEqual({ text: 'Hello', tokens: 2 });
      expect(publishers.opened.map((o) => o.attempt)).toEqual([2]);
      expect(publishers.events(REQUEST_ID)).toEqual([
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
        publishers.sent.set(REQUEST_ID, { text: 'Hello', tokens: 2, ended: false });
        engine.continuesReplies = continues;
        engine.generation = saying('Hi');
        const { job } = jobOf(data, { attemptsStarted: 2 });
        await processor.handle(job, 'token-2', undefined);
        expect(engine.requests.at(-1)?.continueFrom).toBeUndefined();
        expect(publishers.opened.at(-1)?.publisher.events[0]).toEqual({
          type: 'start',
          promptTokens: 5,
          resumed: false,
        });
      }
    });

    it('returns without generating when an earlier attempt already ended the reply', async () => {
      publishers.sent.set(REQUEST_ID, { text: 'Hello', tokens: 2, ended: true });
      const { job } = jobOf(chatJob(), { attemptsStarted: 2 });
      expect(await processor.handle(job, 'token-2', undefined)).toEqual({
        finishReason: 'stop',
        usage: { promptTokens: 0, completionTokens: 0 },
      });
      expect(engine.requests).toEqual([]);
      expect(publishers.events(REQUEST_ID)).toEqual([]);
      expect(cancellation.tracked).toEqual([]);
    });

    it('reports input no retry can fix as a 400 and fails the job for good', async () => {
      engine.generation = async () => {
        throw new EngineInputError('The prompt is longer than the context.', 'context_length_exceeded');
      };
      const { job } = jobOf(chatJob());
      const error = await rejection(processor.handle(job, 'token-1', undefined));
      expect(error).toBeInstanceOf(UnrecoverableError);
      expect((error as Error).message).toBe('The prompt is longer than the context.');
      expect(publishers.events(REQUEST_ID)).toEqual([
        {
          type: 'fail',
          status: 400,
          code: 'context_length_exceeded',
          message: 'The prompt is longer than the context.',
        },
      ]);
      expect(cancellation.tracked).toEqual([]);
    });

    it('reports any other failure only on the last attempt, leaving earlier ones to the retry', async () => {
      const boom = new Error('the context is gone');
      engine.generation = async () => {
        throw boom;
      };
      const first = jobOf(chatJob(), { attemptsStarted: 1, attempts: 2 });
      expect(await rejection(processor.handle(first.job, 'token-1', undefined))).toBe(boom);
      expect(publishers.events(REQUEST_ID)).toEqual([]);

      const last = jobOf(chatJob(), { attemptsStarted: 2, attempts: 2 });
      expect(await rejection(processor.handle(last.job, 'token-2', undefined))).toBe(boom);
      expect(publishers.events(REQUEST_ID)).toEqual([
        { type: 'fail', status: 500, code: 'generation_failed', message: 'Generation failed: the context is gone' },
      ]);
      expect(cancellation.tracked).toEqual([]);
    });

    it('fails the job for good, ending no reply, when the client cancelled', async () => {
      const { generation, started } = untilStopped('par');
      engine.generation = generation;
      const { job, movedToWait } = jobOf(chatJob());
      const handled = rejection(processor.handle(job, 'token-1', undefined));
      await started;
      cancellation.stop(STOP.cancelled, [REQUEST_ID]);
      const error = await handled;
      expect(error).toBeInstanceOf(UnrecoverableError);
      expect((error as Error).message).toContain('cancelled by the client');
      expect(publishers.events(REQUEST_ID).some((e) => e.type === 'end')).toBe(false);
      expect(movedToWait).toEqual([]);
      expect(cancellation.tracked).toEqual([]);
    });

    it('stops a request whose client cancelled before its job started', async () => {
      cancellation.cancelledEarly.add(REQUEST_ID);
      engine.generation = untilStopped('par').generation;
      const { job } = jobOf(chatJob());
      expect(await rejection(processor.handle(job, 'token-1', undefined))).toBeInstanceOf(UnrecoverableError);
      expect(publishers.events(REQUEST_ID).some((e) => e.type === 'end')).toBe(false);
    });

    it('hands the job back to the queue, spending no attempt and reporting nothing, when the worker shuts down', async () => {
      const { generation, started } = untilStopped('par');
      engine.generation = generation;
      // Even on the last attempt: the job is not failing, another worker continues it.
      const { job, movedToWait } = jobOf(chatJob(), { attemptsStarted: 2, attempts: 2 });
      const handled = rejection(processor.handle(job, 'token-7', undefined));
      await started;
      cancellation.stop(STOP.shutdown);
      expect(await handled).toBeInstanceOf(WaitingError);
      expect(movedToWait).toEqual(['token-7']);
      expect(publishers.events(REQUEST_ID).map((e) => e.type)).toEqual(['start', 'output']);
      expect(cancellation.tracked).toEqual([]);
    });

    it('refuses a job of a deployment this worker does not serve, telling its client why', async () => {
      const { job } = jobOf(chatJob({ deployment: 'elsewhere' }));
      expect(await rejection(processor.handle(job, 'token-1', undefined))).toBeInstanceOf(UnrecoverableError);
      expect(engine.requests).toEqual([]);
      // The worker reports every failure its handler sees, as it must for a batch line (see below).
      expect(publishers.events(REQUEST_ID)).toEqual([
        {
          type: 'fail',
          status: 500,
          code: 'generation_failed',
          message: 'Generation failed: This worker does not serve deployment "elsewhere".',
        },
      ]);
      expect(cancellation.tracked).toEqual([]);
    });

    it('reports nothing when another worker took the job over, even on its last attempt', async () => {
      const { generation, started } = untilStopped('par');
      engine.generation = generation;
      const { job, movedToWait } = jobOf(chatJob(), { attemptsStarted: 2, attempts: 2 });
      const handled = rejection(processor.handle(job, 'token-1', undefined));
      await started;
      cancellation.stop(STOP.lostLock);
      const error = await handled;
      expect(error).not.toBeInstanceOf(UnrecoverableError);
      expect((error as Error).message).toContain('taken over');
      // The reply is the other worker's to end: this attempt neither ends nor fails it.
      expect(publishers.events(REQUEST_ID).map((e) => e.type)).toEqual(['start', 'output']);
      expect(movedToWait).toEqual([]);
      expect(cancellation.tracked).toEqual([]);
    });
  });

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
      engine.generation = saying('Hi');
      await processor.handle(jobOf(withImages()).job, 'token-1', undefined);
      expect(releaser.released).toEqual(released);
    });

    it('releases them when the job fails for good: input no retry fixes, a cancel, the last attempt', async () => {
      engine.generation = async () => {
        throw new EngineInputError('too long', 'context_length_exceeded', 'messages');
      };
      await rejection(processor.handle(jobOf(withImages()).job, 'token-1', undefined));
      expect(releaser.released).toEqual(released);

      cancellation.cancelledEarly.add(REQUEST_ID);
      engine.generation = untilStopped('par').generation;
      await rejection(processor.handle(jobOf(withImages()).job, 'token-2', undefined));
      expect(releaser.released).toEqual([...released, ...released]);
      cancellation.cancelledEarly.clear();

      engine.generation = async () => {
        throw new Error('the context is gone');
      };
      await rejection(processor.handle(jobOf(withImages(), { attemptsStarted: 2 }).job, 'token-3', undefined));
      expect(releaser.released).toHaveLength(3);
    });

    it('keeps them for a job that runs again: an attempt left, handed back at shutdown, or taken over', async () => {
      engine.generation = async () => {
        throw new Error('the context is gone');
      };
      await rejection(processor.handle(jobOf(withImages(), { attemptsStarted: 1 }).job, 'token-1', undefined));

      for (const reason of [STOP.shutdown, STOP.lostLock]) {
        const { generation, started } = untilStopped('par');
        engine.generation = generation;
        const handled = rejection(
          processor.handle(jobOf(withImages(), { attemptsStarted: 2 }).job, 'token-2', undefined),
        );
        await started;
        cancellation.stop(reason);
        await handled;
      }
      expect(releaser.released).toEqual([]);
    });

    it('releases those of a batch line under its job id, as the batch stored them', async () => {
      engine.generation = saying('Hi');
      const lineJobId = `${BATCH.batchId}-${BATCH.line}`;
      await processor.handle(jobOf(withImages({ batch: BATCH, requestId: lineJobId })).job, 'token-1', undefined);
      expect(releaser.released).toEqual([{ jobId: lineJobId, sha256s: released[0]!.sha256s }]);
    });

    it('releases nothing for a job without images', async () => {
      engine.generation = saying('Hi');
      await processor.handle(jobOf(chatJob()).job, 'token-1', undefined);
      expect(releaser.released).toEqual([]);
    });
  });

  describe('a batch line', () => {
    it('hands the whole reply to its batch as one result, publishing nothing', async () => {
      engine.generation = saying('Hel', 'lo');
      const { job } = jobOf(chatJob({ batch: BATCH }));
      expect(await processor.handle(job, 'token-1', undefined)).toEqual({ finishReason: 'stop', usage: USAGE });
      expect(batchResults.pushed).toEqual([
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
      expect(publishers.opened).toEqual([]);
      expect(cancellation.tracked).toEqual([]);
    });

    it('reports a failure once, on its last attempt', async () => {
      const boom = new Error('the context is gone');
      engine.generation = async () => {
        throw boom;
      };
      const first = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 1, attempts: 2 });
      expect(await rejection(processor.handle(first.job, 'token-1', undefined))).toBe(boom);
      expect(batchResults.pushed).toEqual([]);

      const last = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 2, attempts: 2 });
      expect(await rejection(processor.handle(last.job, 'token-2', undefined))).toBe(boom);
      expect(batchResults.pushed).toEqual([
        {
          batchId: BATCH.batchId,
          result: {
            ok: false,
            customId: BATCH.customId,
            line: BATCH.line,
            requestId: REQUEST_ID,
            model: 'alpha',
            status: 500,
            code: 'generation_failed',
            message: 'Generation failed: the context is gone',
          },
        },
      ]);
    });

    it('reports input no retry can fix as a 400 on its first attempt and fails the job for good', async () => {
      engine.generation = async () => {
        throw new EngineInputError('Too long.', 'context_length_exceeded');
      };
      const { job } = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 1, attempts: 2 });
      expect(await rejection(processor.handle(job, 'token-1', undefined))).toBeInstanceOf(UnrecoverableError);
      expect(batchResults.pushed.map((p) => p.result)).toEqual([
        expect.objectContaining({ ok: false, status: 400, code: 'context_length_exceeded', message: 'Too long.' }),
      ]);
    });

    it('hands its batch every choice whole: reasoning, text, tool calls and each finish reason', async () => {
      engine.generation = async (_request, { onStart, onOutput }) => {
        onStart(5);
        onOutput({ choice: 0, reasoning: 'hm' });
        onOutput({ choice: 1, text: 'b', tokens: 1 });
        onOutput({ choice: 0, text: 'a' });
        onOutput({ choice: 0, toolCall: { index: 0, id: 'call_1', name: 'f', arguments: '{"x":' } });
        onOutput({ choice: 0, toolCall: { index: 0, arguments: '1}' } });
        return { ...finished('tool_calls'), finishReasons: ['tool_calls', 'length'] };
      };
      await processor.handle(jobOf(chatJob({ batch: BATCH, n: 2 })).job, 'token-1', undefined);
      expect(batchResults.pushed.map((p) => p.result)).toEqual([
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
      publishers.sent.set(REQUEST_ID, { text: 'Hello', tokens: 2, ended: true });
      engine.generation = saying('Hi');
      const { job } = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 2, attempts: 2 });
      expect(await processor.handle(job, 'token-2', undefined)).toEqual({ finishReason: 'stop', usage: USAGE });
      expect(engine.requests).toHaveLength(1);
      expect(engine.requests[0].continueFrom).toBeUndefined();
      expect(batchResults.pushed.map((p) => p.result)).toEqual([
        expect.objectContaining({
          ok: true,
          reply: { choices: [{ index: 0, text: 'Hi', finishReason: 'stop' }], usage: USAGE },
        }),
      ]);
      expect(publishers.opened).toEqual([]);
    });

    it('reports nothing when another worker took the line over, even on its last attempt', async () => {
      const { generation, started } = untilStopped('par');
      engine.generation = generation;
      const { job } = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 2, attempts: 2 });
      const handled = rejection(processor.handle(job, 'token-1', undefined));
      await started;
      cancellation.stop(STOP.lostLock);
      expect((await handled) as Error).not.toBeInstanceOf(UnrecoverableError);
      // The other worker's run writes the line; a failure here would be written in its place.
      expect(batchResults.pushed).toEqual([]);
    });

    it('reports a line stopped for good (its job cancelled) once, on its first attempt', async () => {
      const jobSignal = new AbortController();
      const { generation, started } = untilStopped('par');
      engine.generation = generation;
      const { job } = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 1, attempts: 2 });
      const handled = rejection(processor.handle(job, 'token-1', jobSignal.signal));
      await started;
      jobSignal.abort();
      expect(await handled).toBeInstanceOf(UnrecoverableError);
      // The job fails for good: its batch hears of it now, from the worker that ran it.
      expect(batchResults.pushed.map((p) => p.result)).toEqual([
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
      expect(await rejection(processor.handle(job, 'token-1', undefined))).toBeInstanceOf(UnrecoverableError);
      expect(batchResults.pushed).toEqual([
        {
          batchId: BATCH.batchId,
          result: {
            ok: false,
            customId: BATCH.customId,
            line: BATCH.line,
            requestId: REQUEST_ID,
            model: 'elsewhere',
            status: 500,
            code: 'generation_failed',
            message: 'Generation failed: This worker does not serve deployment "elsewhere".',
          },
        },
      ]);
      expect(publishers.opened).toEqual([]);
    });

    it('hands the line back to the queue, reporting nothing, when the worker shuts down', async () => {
      const { generation, started } = untilStopped('par');
      engine.generation = generation;
      const { job, movedToWait } = jobOf(chatJob({ batch: BATCH }), { attemptsStarted: 2, attempts: 2 });
      const handled = rejection(processor.handle(job, 'token-9', undefined));
      await started;
      cancellation.stop(STOP.shutdown);
      expect(await handled).toBeInstanceOf(WaitingError);
      expect(movedToWait).toEqual(['token-9']);
      expect(batchResults.pushed).toEqual([]);
    });
  });
});
