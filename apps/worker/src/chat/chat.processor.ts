import { Injectable, Logger } from '@nestjs/common';
import { UnrecoverableError, WaitingError, type Job } from 'bullmq';
import { EngineInputError, type ChatEngine, type GenerateRequest, type OutputPiece } from '@conveyor/engine';
import { CHAT_JOB, ReplyAccumulator, type BatchLineRef, type ChatJobData, type ChatJobResult, type ReplyResult } from '@conveyor/queue';
import { BatchResultSink } from '../batch/batch-result.sink.js';
import { CancellationService, STOP } from '../cancel/cancellation.service.js';
import { EngineRegistry } from '../engine/engine-registry.js';
import type { JobHandler } from '../jobs/job-handler.js';
import { ReplyPublisherFactory } from '../reply/reply-publisher.factory.js';

/** Runs one chat job: generate with the engine, publish every piece of text as it comes. */
@Injectable()
export class ChatProcessor implements JobHandler<ChatJobData, ChatJobResult> {
  readonly jobName = CHAT_JOB;
  private readonly logger = new Logger(ChatProcessor.name);

  constructor(
    private readonly engines: EngineRegistry,
    private readonly publishers: ReplyPublisherFactory,
    private readonly cancellation: CancellationService,
    private readonly batchResults: BatchResultSink,
  ) {}

  async handle(job: Job<ChatJobData, ChatJobResult>, token: string | undefined, jobSignal: AbortSignal | undefined): Promise<ChatJobResult> {
    const { requestId } = job.data;
    const engine = this.engines.get(job.data.deployment);
    // Queues are per deployment, so this only happens to a job put on the wrong queue by hand.
    if (!engine) throw new UnrecoverableError(`This worker does not serve deployment "${job.data.deployment}".`);
    if (job.data.batch) return this.runBatchLine(job, engine, token, jobSignal);
    // attemptsStarted also counts restarts after a stalled worker, which is what fencing needs.
    const attempt = Math.max(1, job.attemptsStarted);
    const started = Date.now();
    this.logger.log({ msg: 'job started', requestId, deployment: job.data.deployment, attempt, queuedMs: started - job.data.enqueuedAt });
    const publisher = this.publishers.open(requestId, attempt);
    const signal = this.cancellation.track(requestId, jobSignal);
    this.cancellation.abortIfCancelled(requestId);
    try {
      // A retried plain reply continues what the client was already sent, so a stream never repeats or
      // contradicts itself. Other replies (several choices, a grammar, tool calls) start over.
      const sent = attempt > 1 ? await this.publishers.replay(requestId) : { text: '', ended: false };
      if (sent.ended) return { finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } };
      const resume = attempt > 1 && engine.continuesReplies && continuable(job.data);
      const result = await engine.generate(
        { ...generateRequest(job.data), signal, continueFrom: resume ? sent.text : undefined },
        { onStart: (n) => publisher.start(n, resume), onOutput: (piece) => publisher.output(piece) },
      );
      if (result.aborted) await this.stopped(job, token, signal);
      await publisher.end(result.finishReasons, result.usage);
      this.logger.log({ msg: 'job finished', requestId, attempt, finishReason: result.finishReason, ...result.usage, ms: Date.now() - started });
      return { finishReason: result.finishReason, usage: result.usage };
    } catch (err) {
      if (err instanceof WaitingError) throw err;
      if (err instanceof EngineInputError) {
        await publisher.fail(400, err.code, err.message);
        throw new UnrecoverableError(err.message);
      }
      const lastAttempt = err instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (lastAttempt) await publisher.fail(500, 'generation_failed', `Generation failed: ${(err as Error).message}`).catch(() => undefined);
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
    if (signal.reason === STOP.lostLock) throw new Error('The job was taken over after this worker lost its lock.');
    throw new UnrecoverableError('The request was cancelled by the client.');
  }

  /** A batch line: generate the whole reply, then hand it to the batch (no client is listening). */
  private async runBatchLine(
    job: Job<ChatJobData, ChatJobResult>,
    engine: ChatEngine,
    token: string | undefined,
    jobSignal: AbortSignal | undefined,
  ): Promise<ChatJobResult> {
    const { requestId, deployment: model } = job.data;
    const { batchId, customId, line } = job.data.batch as BatchLineRef;
    const signal = this.cancellation.track(requestId, jobSignal);
    const reply = new ReplyAccumulator();
    try {
      const result = await engine.generate(
        { ...generateRequest(job.data), signal },
        { onStart: () => undefined, onOutput: (piece) => reply.apply(asDelta(piece)) },
      );
      if (result.aborted) await this.stopped(job, token, signal);
      const end = { type: 'end', attempt: 0, seq: 0, finishReason: result.finishReason, finishReasons: result.finishReasons, usage: result.usage } as const;
      await this.batchResults.push(batchId, { ok: true, customId, line, requestId, model, reply: reply.apply(end) as ReplyResult });
      return { finishReason: result.finishReason, usage: result.usage };
    } catch (err) {
      if (err instanceof WaitingError) throw err;
      const input = err instanceof EngineInputError;
      if (input || job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
        const [status, code] = input ? [400, err.code] : [500, 'generation_failed'];
        await this.batchResults.push(batchId, { ok: false, customId, line, requestId, model, status, code, message: (err as Error).message });
      }
      throw input ? new UnrecoverableError((err as Error).message) : err;
    } finally {
      this.cancellation.untrack(requestId);
    }
  }
}

/** The engine's request for a job: everything but the signal and what an earlier attempt sent. */
function generateRequest(data: ChatJobData): Omit<GenerateRequest, 'signal' | 'continueFrom'> {
  const { messages, prompts, tools, toolChoice, responseFormat, sampling, maxTokens, stop, n, logprobs } = data;
  return { messages, prompts, tools, toolChoice, responseFormat, sampling, maxTokens, stop, n, logprobs };
}

/** Only a plain text reply can be continued from its text alone. */
const continuable = (data: ChatJobData): boolean =>
  !data.prompts && !data.tools?.length && !data.responseFormat && (data.n ?? 1) === 1 && data.logprobs === undefined;

const asDelta = ({ choice, text, ...rest }: OutputPiece) => ({ type: 'delta', attempt: 0, seq: 0, choice, text: text ?? '', ...rest }) as const;
