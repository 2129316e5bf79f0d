import { Injectable, Logger } from '@nestjs/common';
import { UnrecoverableError, type Job } from 'bullmq';
import type { EmbedResult } from '@conveyor/engine';
import { EMBED_JOB, type JobResult, type EmbedJobData, type TokenUsage } from '@conveyor/queue';
import { CancellationTracker } from '../cancel/cancellation-tracker.port.js';
import { EngineRegistry } from '../engine/engine-registry.js';
import { attemptOf, refuseIfExpired, reportFailure, stopped } from '../jobs/job-endings.js';
import type { JobHandler } from '../jobs/job-handler.js';
import { ReplySinks } from '../jobs/reply-sinks.js';
import { toBase64Float32 } from './float32-base64.js';

/**
 * Runs one embeddings job (a request, or a batch line of one): embed every input, then send them
 * into the job's reply sink in one go. Nothing is sent before all inputs are embedded, so a retried
 * job simply starts over: its `start` (not resumed) drops whatever an earlier attempt sent.
 */
@Injectable()
export class EmbedProcessor implements JobHandler<EmbedJobData, JobResult> {
  readonly jobName = EMBED_JOB;
  private readonly logger = new Logger(EmbedProcessor.name);

  constructor(
    private readonly engines: EngineRegistry,
    private readonly sinks: ReplySinks,
    private readonly cancellation: CancellationTracker,
  ) {}

  async handle(
    job: Job<EmbedJobData, JobResult>,
    token: string | undefined,
    jobSignal: AbortSignal | undefined,
  ): Promise<JobResult> {
    const { requestId, deployment, batch } = job.data;
    const attempt = attemptOf(job);
    const started = Date.now();
    const { sink } = await this.sinks.open(job.data, attempt);
    await refuseIfExpired(job.data, sink, started);
    const signal = this.cancellation.track(requestId, jobSignal);
    // A batch line has no client to cancel it.
    if (!batch) this.cancellation.abortIfCancelled(requestId);
    try {
      const result = await this.run(job.data, signal).catch(async (err: unknown) => {
        // The engine gives up when it is stopped: the stop says how the job ends.
        if (signal.aborted) await stopped(job, token, signal);
        throw err;
      });
      const usage: TokenUsage = { promptTokens: result.promptTokens, completionTokens: 0 };
      sink.start(usage.promptTokens, false);
      result.vectors.forEach((vector, index) => sink.embedding(index, toBase64Float32(vector)));
      await sink.end({ finishReasons: ['stop'], usage });
      this.logger.log({
        msg: 'embed job finished',
        requestId,
        deployment,
        attempt,
        inputs: result.vectors.length,
        ...(job.data.query !== undefined ? { rerank: true } : {}),
        promptTokens: usage.promptTokens,
        ms: Date.now() - started,
      });
      return { finishReason: 'stop', usage };
    } catch (err) {
      throw await reportFailure(sink, err, job);
    } finally {
      this.cancellation.untrack(requestId);
    }
  }

  /** Embeds the inputs, or scores them against a rerank job's query (each score a vector of one value). */
  private async run({ deployment, inputs, query }: EmbedJobData, signal: AbortSignal): Promise<EmbedResult> {
    // Queues are per deployment and the API checks the task, so a missing engine only happens to a job put on a queue by hand.
    if (query !== undefined) {
      const ranker = this.engines.ranker(deployment);
      if (!ranker) throw new UnrecoverableError(`This worker does not rerank for deployment "${deployment}".`);
      const documents = inputs.filter((d): d is string => typeof d === 'string');
      const { scores, promptTokens } = await ranker.rank(query, documents, signal);
      return { vectors: scores.map((score) => Float32Array.of(score)), promptTokens };
    }
    const engine = this.engines.embedder(deployment);
    if (!engine) throw new UnrecoverableError(`This worker does not serve embeddings for deployment "${deployment}".`);
    return engine.embed(inputs, signal);
  }
}
