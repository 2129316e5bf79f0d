import { Inject, Injectable, Logger } from '@nestjs/common';
import { UnrecoverableError, type Job } from 'bullmq';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import type { OutputPiece } from '@conveyor/engine';
import {
  GENERATE_JOB,
  jobImageHashes,
  promptBlockHashes,
  type GenerationJobData,
  type JobResult,
} from '@conveyor/queue';
import { CancellationTracker } from '../cancel/cancellation-tracker.port.js';
import { EngineRegistry } from '../engine/engine-registry.js';
import { ImageReleaser } from '../images/image-releaser.port.js';
import { attemptOf, endsForGood, refuseIfExpired, reportFailure, stopped } from '../jobs/job-endings.js';
import type { JobHandler } from '../jobs/job-handler.js';
import { ReplySinks } from '../jobs/reply-sinks.js';
import { PrefixRoutes } from '../routing/prefix-routes.port.js';
import { GenerationSpan } from './generation-span.js';

/**
 * Runs one generation job (chat, legacy completion, or a batch line of either): generates with the
 * engine and sends every piece, as it comes, into the job's reply sink.
 */
@Injectable()
export class GenerationProcessor implements JobHandler<GenerationJobData, JobResult> {
  readonly jobName = GENERATE_JOB;
  private readonly logger = new Logger(GenerationProcessor.name);

  constructor(
    private readonly engines: EngineRegistry,
    private readonly sinks: ReplySinks,
    private readonly cancellation: CancellationTracker,
    private readonly routes: PrefixRoutes,
    private readonly images: ImageReleaser,
    @Inject(PLATFORM_CONFIG) private readonly config: Pick<PlatformConfig, 'deployments'>,
  ) {
    // The outbox writes by engine round where an engine says when its rounds end.
    engines.onRound(() => sinks.roundEnded());
    // Prompts an engine moves out of its sequences into host memory stay announced for routing.
    engines.onHeldPrompts((deployment, change) => routes.heldApart(deployment, change));
  }

  /**
   * Runs the job; once it has ended for good (finished, or failed with no attempt left), its images are
   * released, since no worker will need them again. A job handed back, or taken over by another worker,
   * keeps them.
   */
  async handle(
    job: Job<GenerationJobData, JobResult>,
    token: string | undefined,
    jobSignal: AbortSignal | undefined,
  ): Promise<JobResult> {
    let result: JobResult;
    try {
      result = await this.run(job, token, jobSignal);
    } catch (err) {
      if (endsForGood(err, job)) await this.releaseImages(job);
      throw err;
    }
    await this.releaseImages(job);
    return result;
  }

  private async releaseImages(job: Job<GenerationJobData, JobResult>): Promise<void> {
    const images = jobImageHashes(job.data);
    if (!images.length) return;
    // Never fails the job: an image left behind goes with its expiry.
    await this.images.release(job.data.requestId, images).catch((err: Error) => {
      this.logger.warn(`Could not release the images of ${job.data.requestId}: ${err.message}`);
    });
  }

  private async run(
    job: Job<GenerationJobData, JobResult>,
    token: string | undefined,
    jobSignal: AbortSignal | undefined,
  ): Promise<JobResult> {
    const { requestId, deployment, batch } = job.data;
    const attempt = attemptOf(job);
    const started = Date.now();
    this.logger.log({ msg: 'job started', requestId, deployment, attempt, queuedMs: started - job.data.enqueuedAt });
    const { sink, sent } = await this.sinks.open(job.data, attempt);
    await refuseIfExpired(job.data, sink, started);
    const signal = this.cancellation.track(requestId, jobSignal);
    // A batch line has no client to cancel it.
    if (!batch) this.cancellation.abortIfCancelled(requestId);
    try {
      const engine = this.engines.get(deployment);
      // Queues are per deployment, so this only happens to a job put on the wrong queue by hand.
      if (!engine) throw new UnrecoverableError(`This worker does not serve deployment "${deployment}".`);
      // A retried plain reply continues what the client was already sent, so a stream never repeats or
      // contradicts itself. Other replies (several choices, a grammar, tool calls) start over.
      if (sent?.ended) return { finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } };
      const resume = sent !== null && engine.continuesReplies && continuable(job.data);
      const replies = new ReplyTexts(resume ? sent.text : '');
      const span = new GenerationSpan(
        job.data,
        this.engineKind(deployment),
        attempt,
        resume,
        this.engines.loadOf(deployment),
      );
      const result = await span
        .run(() =>
          engine.generate(
            { ...job.data, signal, continueFrom: resume ? { text: sent.text, tokens: sent.tokens } : undefined },
            {
              onStart: (n) => {
                span.started(n);
                sink.start(n, resume);
              },
              onOutput: (piece) => {
                span.output(piece);
                replies.add(piece);
                sink.output(piece);
              },
            },
          ),
        )
        .then(
          (result) => {
            span.finished(result);
            span.end();
            return result;
          },
          (err: unknown) => {
            span.end(err);
            throw err;
          },
        );
      if (result.aborted) await stopped(job, token, signal);
      this.rememberHeld(job.data, result.sequences, replies);
      await sink.end(result);
      this.logger.log({
        msg: 'job finished',
        requestId,
        attempt,
        finishReason: result.finishReason,
        ...result.usage,
        ms: Date.now() - started,
      });
      return { finishReason: result.finishReason, usage: result.usage };
    } catch (err) {
      throw await reportFailure(sink, err, job);
    } finally {
      this.cancellation.untrack(requestId);
    }
  }

  private engineKind(deployment: string) {
    return this.config.deployments.find((d) => d.id === deployment)?.engine.kind;
  }

  /**
   * Tells the router what the reply's sequences now hold: each its prompt and its choice's reply, as
   * the next turn of the conversation will send them back (a reply with tool calls: just the prompt).
   */
  private rememberHeld(data: GenerationJobData, sequences: number[] | undefined, replies: ReplyTexts): void {
    if (!sequences?.length) return;
    // With several legacy prompts no single chain describes a sequence: promptBlockHashes gives none.
    const chains = sequences.map((_, choice) =>
      promptBlockHashes(data, replies.calledTools(choice) ? undefined : replies.text(choice)),
    );
    this.routes.held(data.deployment, sequences, chains);
  }
}

/** Each choice's reply text as it is generated, after what an earlier attempt already sent. */
class ReplyTexts {
  private readonly texts: string[] = [];
  private readonly tools = new Set<number>();

  constructor(private readonly before: string) {}

  add(piece: OutputPiece): void {
    if (piece.text) this.texts[piece.choice] = (this.texts[piece.choice] ?? '') + piece.text;
    if (piece.toolCall) this.tools.add(piece.choice);
  }

  text(choice: number): string {
    return this.before + (this.texts[choice] ?? '');
  }

  calledTools(choice: number): boolean {
    return this.tools.has(choice);
  }
}

/** Only a plain text reply can be continued from its text alone. */
const continuable = (data: GenerationJobData): boolean =>
  !data.prompts && !data.tools?.length && !data.responseFormat && (data.n ?? 1) === 1 && data.logprobs === undefined;
