/**
 * In-memory stand-ins for every port the worker's generation processor drives (engine, reply streams,
 * batch results, cancellation, prefix routes, image releases), the jobs BullMQ would hand it, and a
 * processor wired to them, so each of its cases reads what the processor published, pushed and returned.
 */
import { beforeAll, beforeEach } from '@jest/globals';
import { Logger } from '@nestjs/common';
import {
  type GenerationEngine,
  type GenerateCallbacks,
  type GenerateRequest,
  type GenerateResult,
  type HeldPromptChange,
} from '@conveyor/engine';
import type {
  BatchLineRef,
  BatchLineResult,
  FinishReason,
  GenerationJobData,
  JobResult,
  TokenUsage,
} from '@conveyor/queue';
import type { Job } from 'bullmq';
import { BatchResultSink } from '../../apps/worker/src/batch/batch-result-sink.port.js';
import { CancellationTracker, STOP, type StopReason } from '../../apps/worker/src/cancel/cancellation-tracker.port.js';
import { EngineRegistry } from '../../apps/worker/src/engine/engine-registry.js';
import { GenerationProcessor } from '../../apps/worker/src/generation/generation.processor.js';
import { ImageReleaser } from '../../apps/worker/src/images/image-releaser.port.js';
import { ReplySinks } from '../../apps/worker/src/jobs/reply-sinks.js';
import { PrefixRoutes } from '../../apps/worker/src/routing/prefix-routes.port.js';
import { RecordingReplyStreams, REPLY_CONFIG } from './reply-streams.js';

/** Cancels in memory: the test plays the API's cancel, the host's shutdown and a lost lock. */
export class FakeCancellation extends CancellationTracker {
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

export class FakeBatchResults extends BatchResultSink {
  readonly pushed: { batchId: string; result: BatchLineResult }[] = [];

  async push(batchId: string, result: BatchLineResult): Promise<void> {
    this.pushed.push({ batchId, result });
  }
}

export class RecordingReleaser extends ImageReleaser {
  readonly released: { jobId: string; sha256s: readonly string[] }[] = [];

  async release(jobId: string, sha256s: readonly string[]): Promise<void> {
    this.released.push({ jobId, sha256s });
  }
}

export class RecordingRoutes extends PrefixRoutes {
  readonly worker = 'host_1';
  readonly records: { deployment: string; sequences: readonly number[]; chains: readonly (readonly string[])[] }[] = [];
  readonly apart: { deployment: string; change: HeldPromptChange }[] = [];

  held(deployment: string, sequences: readonly number[], chains: readonly (readonly string[])[]): void {
    this.records.push({ deployment, sequences, chains });
  }

  heldApart(deployment: string, change: HeldPromptChange): void {
    this.apart.push({ deployment, change });
  }

  free(): void {}
}

export type Generation = (request: GenerateRequest, callbacks: GenerateCallbacks) => Promise<GenerateResult>;

/** An engine that runs whatever generation the test gives it, and keeps every request it was given. */
export class ScriptedEngine implements GenerationEngine {
  readonly requests: GenerateRequest[] = [];
  continuesReplies = true;
  generation: Generation = async () => finished('stop', 0);

  generate(request: GenerateRequest, callbacks: GenerateCallbacks): Promise<GenerateResult> {
    this.requests.push(request);
    return this.generation(request, callbacks);
  }

  async dispose(): Promise<void> {}
}

export const USAGE: TokenUsage = { promptTokens: 5, completionTokens: 2 };

export function finished(finishReason: FinishReason, completionTokens = 2): GenerateResult {
  return {
    finishReason,
    finishReasons: [finishReason],
    usage: { promptTokens: 5, completionTokens },
    aborted: false,
  };
}

/** A generation that says `texts`, then ends with `stop`. */
export const saying =
  (...texts: string[]): Generation =>
  async (_request, { onStart, onOutput }) => {
    onStart(5);
    for (const text of texts) onOutput({ choice: 0, text });
    return finished('stop');
  };

/**
 * A generation that starts, says `text`, then runs until its signal fires and reports itself
 * aborted, as the engine does. `started` resolves once it is under way.
 */
export const untilStopped = (text: string) => {
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

/** The fields of a BullMQ job the processor reads. */
interface JobStandIn {
  data: GenerationJobData;
  attemptsStarted: number;
  attemptsMade: number;
  opts: { attempts?: number };
  moveToWait(token?: string): Promise<number>;
}

/** A job as BullMQ hands it to the processor, without a queue; records the tokens it was moved back to wait with. */
export function jobOf(
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

export const REQUEST_ID = '7d4c5a8e-2f1b-4e3a-9c6d-0a1b2c3d4e5f';

export const chatJob = (extra: Partial<GenerationJobData> = {}): GenerationJobData => ({
  requestId: REQUEST_ID,
  deployment: 'alpha',
  messages: [{ role: 'user', content: 'Say hello' }],
  sampling: { temperature: 0 },
  stop: [],
  enqueuedAt: Date.now(),
  replyTo: 'replica-1',
  ...extra,
});

export const BATCH: BatchLineRef = { batchId: 'batch_0123456789abcdef01234567', customId: 'line-a', line: 3 };

/** A processor serving deployment `alpha` on a scripted engine, and the stand-ins it drives. */
export function processorWithStandIns() {
  const engine = new ScriptedEngine();
  const publishers = new RecordingReplyStreams();
  const cancellation = new FakeCancellation();
  const batchResults = new FakeBatchResults();
  const engines = new EngineRegistry(new Map([['alpha', engine]]), new Map());
  const routes = new RecordingRoutes();
  const releaser = new RecordingReleaser();
  const processor = new GenerationProcessor(
    engines,
    new ReplySinks(REPLY_CONFIG, publishers, batchResults),
    cancellation,
    routes,
    releaser,
    { deployments: [] },
  );
  return { engine, publishers, cancellation, batchResults, routes, releaser, processor };
}

export type ProcessorTest = ReturnType<typeof processorWithStandIns>;

/** Wires a fresh processor and stand-ins before each test, and returns the object that holds them. */
export function useProcessorWithStandIns(): ProcessorTest {
  const t = {} as ProcessorTest;

  beforeAll(() => {
    // The processor logs every job; the tests read what it published and returned.
    Logger.overrideLogger(false);
  });

  beforeEach(() => {
    Object.assign(t, processorWithStandIns());
  });

  return t;
}
