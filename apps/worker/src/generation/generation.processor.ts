import { Injectable, Logger } from '@nestjs/common';
import { UnrecoverableError, WaitingError, type Job } from 'bullmq';
import { EngineInputError, type GenerationEngine, type OutputPiece } from '@conveyor/engine';
import {
  GENERATE_JOB,
  ReplyAccumulator,
  jobImageHashes,
  promptBlockHashes,
  type BatchLineRef,
  type GenerationJobData,
  type JobResult,
  type ReplyResult,
} from '@conveyor/queue';
import { BatchResultSink } from '../batch/batch-result-sink.port.js';
import { CancellationTracker, STOP } from '../cancel/cancellation-tracker.port.js';
import { EngineRegistry } from '../engine/engine-registry.js';
import { ImageReleaser } from '../images/image-releaser.port.js';
import type { JobHandler } from '../jobs/job-handler.js';
import { ReplyPublisherFactory } from '../reply/reply-publisher.port.js';
import { PrefixRoutes } from '../routing/prefix-routes.port.js';

/** Runs one generation job (chat or legacy completion): generate with the engine, publish every piece as it comes. */
@Injectable()
export class GenerationProcessor implements JobHandler<GenerationJobData, JobResult> {
  readonly jobName = GENERATE_JOB;
  private readonly logger = new Logger(GenerationProcessor.name);

  constructor(
    private readonly engines: EngineRegistry,
    private readonly publishers: ReplyPublisherFactory,
    private readonly cancellation: CancellationTracker,
    private readonly batchResults: BatchResultSink,
    private readonly routes: PrefixRoutes,
    private readonly images: ImageReleaser,
  ) {}

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
    const { requestId } = job.data;
    const engine = this.engines.get(job.data.deployment);
    // Queues are per deployment, so this only happens to a job put on the wrong queue by hand.
    if (!engine) throw new UnrecoverableError(`This worker does not serve deployment "${job.data.deployment}".`);
    if (job.data.batch) return this.runBatchLine(job, engine, token, jobSignal);
    // attemptsStarted also counts restarts after a stalled worker, which is what fencing needs; a job
    // sent on from a worker's own queue goes on from the attempts it had there.
    const attempt = (job.data.attemptBase ?? 0) + Math.max(1, job.attemptsStarted);
    const started = Date.now();
    this.logger.log({
      msg: 'job started',
      requestId,
      deployment: job.data.deployment,
      attempt,
      queuedMs: started - job.data.enqueuedAt,
    });
    const publisher = this.publishers.open(requestId, attempt);
    const signal = this.cancellation.track(requestId, jobSignal);
    this.cancellation.abortIfCancelled(requestId);
    try {
      // A retried plain reply continues what the client was already sent, so a stream never repeats or
      // contradicts itself. Other replies (several choices, a grammar, tool calls) start over.
      const sent = attempt > 1 ? await this.publishers.replay(requestId) : { text: '', tokens: 0, ended: false };
      if (sent.ended) return { finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } };
      const resume = attempt > 1 && engine.continuesReplies && continuable(job.data);
      const replies = new ReplyTexts(resume ? sent.text : '');
      const result = await engine.generate(
        { ...job.data, signal, continueFrom: resume ? { text: sent.text, tokens: sent.tokens } : undefined },
        {
          onStart: (n) => publisher.start(n, resume),
          onOutput: (piece) => {
            replies.add(piece);
            publisher.output(piece);
          },
        },
      );
      if (result.aborted) await this.stopped(job, token, signal);
      this.rememberHeld(job.data, result.sequences, replies);
      await publisher.end(result.finishReasons, result.usage);
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
      if (err instanceof WaitingError) throw err;
      if (err instanceof EngineInputError) {
        await publisher.fail(400, err.code, err.message, err.param);
        throw new UnrecoverableError(err.message);
      }
      const lastAttempt = err instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (lastAttempt)
        await publisher
          .fail(500, 'generation_failed', `Generation failed: ${(err as Error).message}`)
          .catch(() => undefined);
      throw err;
    } finally {
      this.cancellation.untrack(requestId);
    }
  }

  /**
   * Ends a job whose generation was stopped: a client cancel fails it for good; a shutdown hands it
   * back to the queue without spending an attempt, for another worker to continue; a lost lock
   * means another worker has it already.
   */
  private async stopped(job: Job, token: string | undefined, signal: AbortSignal): Promise<never> {
    if (signal.reason === STOP.shutdown && token) {
      await job.moveToWait(token);
      throw new WaitingError('Handed back: the worker is shutting down.');
    }
    if (signal.reason === STOP.lostLock) throw new TakenOver('The job was taken over after this worker lost its lock.');
    throw new UnrecoverableError('The request was cancelled by the client.');
  }

  /** A batch line: generate the whole reply, then hand it to the batch (no client is listening). */
  private async runBatchLine(
    job: Job<GenerationJobData, JobResult>,
    engine: GenerationEngine,
    token: string | undefined,
    jobSignal: AbortSignal | undefined,
  ): Promise<JobResult> {
    const { requestId, deployment: model } = job.data;
    const { batchId, customId, line } = job.data.batch as BatchLineRef;
    const signal = this.cancellation.track(requestId, jobSignal);
    const reply = new ReplyAccumulator();
    const replies = new ReplyTexts('');
    try {
      const result = await engine.generate(
        { ...job.data, signal },
        {
          onStart: () => undefined,
          onOutput: (piece) => {
            replies.add(piece);
            reply.apply(asDelta(piece));
          },
        },
      );
      if (result.aborted) await this.stopped(job, token, signal);
      this.rememberHeld(job.data, result.sequences, replies);
      const end = {
        type: 'end',
        attempt: 0,
        seq: 0,
        finishReason: result.finishReason,
        finishReasons: result.finishReasons,
        usage: result.usage,
      } as const;
      await this.batchResults.push(batchId, {
        ok: true,
        customId,
        line,
        requestId,
        model,
        reply: reply.apply(end) as ReplyResult,
      });
      return { finishReason: result.finishReason, usage: result.usage };
    } catch (err) {
      if (err instanceof WaitingError) throw err;
      const input = err instanceof EngineInputError;
      if (input || job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
        const [status, code] = input ? [400, err.code] : [500, 'generation_failed'];
        await this.batchResults.push(batchId, {
          ok: false,
          customId,
          line,
          requestId,
          model,
          status,
          code,
          message: (err as Error).message,
        });
      }
      throw input ? new UnrecoverableError((err as Error).message) : err;
    } finally {
      this.cancellation.untrack(requestId);
    }
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

/** Another worker runs the job now: this attempt's end is not the job's. */
class TakenOver extends Error {}

/** Whether BullMQ runs the job no more after `err`: none of its attempts is left, or it may not be retried. */
const endsForGood = (err: unknown, job: Job): boolean =>
  !(err instanceof WaitingError) &&
  !(err instanceof TakenOver) &&
  (err instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1));

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

const asDelta = ({ choice, text, ...rest }: OutputPiece) =>
  ({ type: 'delta', attempt: 0, seq: 0, choice, text: text ?? '', ...rest }) as const;
