import { beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { UnrecoverableError, WaitingError, type Job } from 'bullmq';
import { EngineInputError, type EmbedResult, type LlamaEmbeddingEngine } from '@conveyor/engine';
import type { BatchLineRef, BatchLineResult, EmbedJobData, JobResult } from '@conveyor/queue';
import { BatchResultSink } from '../batch/batch-result-sink.port.js';
import { CancellationTracker, STOP, type StopReason } from '../cancel/cancellation-tracker.port.js';
import { EngineRegistry } from '../engine/engine-registry.js';
import { ReplySinks } from '../jobs/reply-sinks.js';
import { toBase64Float32 } from './float32-base64.js';
import { EmbedProcessor } from './embed.processor.js';
import { RecordingReplyStreams, REPLY_CONFIG } from '../../../../test/support/reply-streams.js';
import { rejection } from '../../../../test/support/rejection.js';

class FakeBatchResults extends BatchResultSink {
  readonly pushed: BatchLineResult[] = [];

  async push(_batchId: string, result: BatchLineResult): Promise<void> {
    this.pushed.push(result);
  }
}

/** Stops in memory: the test plays the host's shutdown and a lost lock. */
class FakeCancellation extends CancellationTracker {
  private readonly running = new Map<string, AbortController>();

  track(requestId: string): AbortSignal {
    const controller = new AbortController();
    this.running.set(requestId, controller);
    return controller.signal;
  }

  abortIfCancelled(): void {}

  stop(reason: StopReason): void {
    for (const controller of this.running.values()) controller.abort(reason);
  }

  untrack(requestId: string): void {
    this.running.delete(requestId);
  }
}

const REQUEST_ID = 'emb-1';
const BATCH: BatchLineRef = { batchId: 'batch_0123456789abcdef01234567', customId: 'line-e', line: 2 };
const VECTORS = [new Float32Array([1, 0]), new Float32Array([0, 1])];

const embedJob = (extra: Partial<EmbedJobData> = {}): EmbedJobData => ({
  requestId: REQUEST_ID,
  deployment: 'vectors',
  inputs: ['a', 'b'],
  enqueuedAt: Date.now(),
  replyTo: 'replica-1',
  ...extra,
});

function jobOf(data: EmbedJobData, attemptsStarted = 1): { job: Job<EmbedJobData, JobResult>; movedToWait: string[] } {
  const movedToWait: string[] = [];
  const job = {
    data,
    attemptsStarted,
    attemptsMade: attemptsStarted - 1,
    opts: { attempts: 2 },
    moveToWait: async (token: string) => void movedToWait.push(token),
  };
  return { job: job as unknown as Job<EmbedJobData, JobResult>, movedToWait };
}

beforeAll(() => Logger.overrideLogger(false));

describe('EmbedProcessor', () => {
  let embed: (inputs: unknown, signal?: AbortSignal) => Promise<EmbedResult>;
  let streams: RecordingReplyStreams;
  let batchResults: FakeBatchResults;
  let cancellation: FakeCancellation;
  let processor: EmbedProcessor;

  beforeEach(() => {
    embed = async () => ({ vectors: VECTORS, promptTokens: 4 });
    const engine = { embed: (inputs: unknown, signal?: AbortSignal) => embed(inputs, signal) };
    const engines = new EngineRegistry(new Map(), new Map([['vectors', engine as unknown as LlamaEmbeddingEngine]]));
    streams = new RecordingReplyStreams();
    batchResults = new FakeBatchResults();
    cancellation = new FakeCancellation();
    processor = new EmbedProcessor(engines, new ReplySinks(REPLY_CONFIG, streams, batchResults), cancellation);
  });

  const usage = { promptTokens: 4, completionTokens: 0 };

  it('writes every vector to the reply stream in one go', async () => {
    expect(await processor.handle(jobOf(embedJob()).job, 'token-1', undefined)).toEqual({
      finishReason: 'stop',
      usage,
    });
    expect(streams.written).toEqual([
      { type: 'start', promptTokens: 4, resumed: false },
      { type: 'embedding', index: 0, vector: toBase64Float32(VECTORS[0]!) },
      { type: 'embedding', index: 1, vector: toBase64Float32(VECTORS[1]!) },
      { type: 'end', finishReasons: ['stop'], usage },
    ]);
    expect(batchResults.pushed).toEqual([]);
  });

  it('hands a batch line its vectors as one result', async () => {
    await processor.handle(jobOf(embedJob({ batch: BATCH })).job, 'token-1', undefined);
    expect(batchResults.pushed).toEqual([
      expect.objectContaining({
        ok: true,
        customId: BATCH.customId,
        line: BATCH.line,
        requestId: REQUEST_ID,
        model: 'vectors',
        reply: expect.objectContaining({ usage, embeddings: VECTORS.map(toBase64Float32) }),
      }),
    ]);
    expect(streams.written).toEqual([]);
  });

  it('embeds nothing for a job taken after its deadline, telling its reader 504', async () => {
    let called = 0;
    embed = async () => {
      called++;
      return { vectors: VECTORS, promptTokens: 4 };
    };
    const enqueuedAt = Date.now() - 5000;
    const job = jobOf(embedJob({ enqueuedAt, deadlineAt: enqueuedAt + 1000 })).job;
    expect(await rejection(processor.handle(job, 'token-1', undefined))).toBeInstanceOf(UnrecoverableError);
    expect(called).toBe(0);
    expect(streams.written).toEqual([
      expect.objectContaining({ type: 'fail', status: 504, code: 'deadline_exceeded' }),
    ]);
    // One taken in time runs as any other.
    streams.written.length = 0;
    await processor.handle(jobOf(embedJob({ deadlineAt: Date.now() + 60_000 })).job, 'token-1', undefined);
    expect(called).toBe(1);
  });

  it('reports input no retry can fix as a 400 and fails the job for good', async () => {
    embed = async () => {
      throw new EngineInputError('input[0] is empty.', 'invalid_value');
    };
    expect(await rejection(processor.handle(jobOf(embedJob()).job, 'token-1', undefined))).toBeInstanceOf(
      UnrecoverableError,
    );
    expect(streams.written).toEqual([
      { type: 'fail', status: 400, code: 'invalid_value', message: 'input[0] is empty.' },
    ]);
  });

  it('reports any other failure of a batch line once, on its last attempt', async () => {
    embed = async () => {
      throw new Error('the context is gone');
    };
    await rejection(processor.handle(jobOf(embedJob({ batch: BATCH }), 1).job, 'token-1', undefined));
    expect(batchResults.pushed).toEqual([]);
    await rejection(processor.handle(jobOf(embedJob({ batch: BATCH }), 2).job, 'token-2', undefined));
    expect(batchResults.pushed).toEqual([
      expect.objectContaining({
        ok: false,
        status: 500,
        code: 'embedding_failed',
        message: 'Embedding failed: the context is gone',
      }),
    ]);
  });

  /** An embedding that runs until it is stopped, then gives up as the engine does. */
  const untilStopped = () => {
    let resolveStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (resolveStarted = resolve));
    embed = (_inputs, signal) =>
      new Promise((_resolve, reject) => {
        signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        resolveStarted();
      });
    return started;
  };

  it('hands the job back, reporting nothing, when the worker shuts down', async () => {
    const started = untilStopped();
    const { job, movedToWait } = jobOf(embedJob({ batch: BATCH }), 2);
    const handled = rejection(processor.handle(job, 'token-3', undefined));
    await started;
    cancellation.stop(STOP.shutdown);
    expect(await handled).toBeInstanceOf(WaitingError);
    expect(movedToWait).toEqual(['token-3']);
    expect(batchResults.pushed).toEqual([]);
  });

  it('reports nothing when another worker took the job over, even on its last attempt', async () => {
    const started = untilStopped();
    const handled = rejection(processor.handle(jobOf(embedJob({ batch: BATCH }), 2).job, 'token-4', undefined));
    await started;
    cancellation.stop(STOP.lostLock);
    expect((await handled) as Error).not.toBeInstanceOf(UnrecoverableError);
    expect(batchResults.pushed).toEqual([]);
  });
});
