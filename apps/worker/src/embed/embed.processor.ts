import { Injectable, Logger } from '@nestjs/common';
import { UnrecoverableError, WaitingError, type Job } from 'bullmq';
import { EngineInputError, type EmbedResult } from '@conveyor/engine';
import { EMBED_JOB, type JobResult, type EmbedJobData, type ReplyResult, type TokenUsage } from '@conveyor/queue';
import { BatchResultSink } from '../batch/batch-result-sink.port.js';
import { CancellationTracker, STOP } from '../cancel/cancellation-tracker.port.js';
import { EngineRegistry } from '../engine/engine-registry.js';
import type { JobHandler } from '../jobs/job-handler.js';
import { ReplyPublisherFactory } from '../reply/reply-publisher.port.js';
import { toBase64Float32 } from './float32-base64.js';

/**
 * Runs one embeddings job: embed every input, then publish them in one go.
 * Nothing is sent before all inputs are embedded, so a retried job simply
 * starts over: its `start` (not resumed) drops whatever an earlier attempt sent.
 */
@Injectable()
export class EmbedProcessor implements JobHandler<EmbedJobData, JobResult> {
  readonly jobName = EMBED_JOB;
  private readonly logger = new Logger(EmbedProcessor.name);

  constructor(
    private readonly engines: EngineRegistry,
    private readonly publishers: ReplyPublisherFactory,
    private readonly cancellation: CancellationTracker,
    private readonly batchResults: BatchResultSink,
  ) {}

  async handle(
    job: Job<EmbedJobData, JobResult>,
    token: string | undefined,
    jobSignal: AbortSignal | undefined,
  ): Promise<JobResult> {
    const { requestId, deployment, batch } = job.data;
    const engine = this.engines.embedder(deployment);
    // Queues are per deployment and the API checks the task, so this only happens to a job put on a queue by hand.
    if (!engine) throw new UnrecoverableError(`This worker does not serve embeddings for deployment "${deployment}".`);
    const attempt = Math.max(1, job.attemptsStarted);
    const started = Date.now();
    const signal = this.cancellation.track(requestId, jobSignal);
    if (!batch) this.cancellation.abortIfCancelled(requestId);
    let result: EmbedResult;
    try {
      result = await engine.embed(job.data.inputs, signal);
    } catch (err) {
      if (signal.aborted) return this.stopped(job, token, signal);
      const input = err instanceof EngineInputError;
      if (input || job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
        const [status, code] = input ? [400, err.code] : [500, 'embedding_failed'];
        const message = input ? err.message : `Embedding failed: ${(err as Error).message}`;
        await this.report(job, attempt, { ok: false, status, code, message }).catch(() => undefined);
      }
      throw input ? new UnrecoverableError((err as Error).message) : err;
    } finally {
      this.cancellation.untrack(requestId);
    }
    const usage: TokenUsage = { promptTokens: result.promptTokens, completionTokens: 0 };
    await this.report(job, attempt, {
      ok: true,
      reply: { choices: [], usage, embeddings: result.vectors.map(toBase64Float32) },
    });
    this.logger.log({
      msg: 'embed job finished',
      requestId,
      deployment,
      attempt,
      inputs: result.vectors.length,
      promptTokens: usage.promptTokens,
      ms: Date.now() - started,
    });
    return { finishReason: 'stop', usage };
  }

  /** Sends the outcome where it is awaited: the request's reply stream, or the batch a line belongs to. */
  private async report(
    job: Job<EmbedJobData, JobResult>,
    attempt: number,
    outcome: { ok: true; reply: ReplyResult } | { ok: false; status: number; code: string; message: string },
  ): Promise<void> {
    const { requestId, deployment: model } = job.data;
    if (job.data.batch) {
      const { batchId, customId, line } = job.data.batch;
      await this.batchResults.push(batchId, { customId, line, requestId, model, ...outcome });
      return;
    }
    const publisher = this.publishers.open(requestId, attempt);
    if (!outcome.ok) return publisher.fail(outcome.status, outcome.code, outcome.message);
    const { usage, embeddings = [] } = outcome.reply;
    publisher.start(usage.promptTokens, false);
    embeddings.forEach((vector, index) => publisher.embedding(index, vector));
    await publisher.end(['stop'], usage);
  }

  /**
   * A client cancel fails the job for good; a shutdown hands it back to the queue without spending
   * an attempt, for another worker to redo; a lost lock means another worker has it already.
   */
  private async stopped(job: Job, token: string | undefined, signal: AbortSignal): Promise<never> {
    if (signal.reason === STOP.shutdown && token) {
      await job.moveToWait(token);
      throw new WaitingError('Handed back: the worker is shutting down.');
    }
    if (signal.reason === STOP.lostLock) throw new Error('The job was taken over after this worker lost its lock.');
    throw new UnrecoverableError('The request was cancelled by the client.');
  }
}
