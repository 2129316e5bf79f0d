import { UnrecoverableError, WaitingError, type Job } from 'bullmq';
import { EngineInputError, EngineOutputError } from '@conveyor/engine';
import { ErrorCode } from '@conveyor/openai';
import { isEmbedJob, isTokenizeJob, type QueuedJobData } from '@conveyor/queue';
import { STOP } from '../cancel/cancellation-tracker.port.js';
import type { ReplySink } from '../reply/reply-sink.js';

/** Another worker runs the job now: this attempt's end is not the job's. */
export class TakenOver extends Error {}

/**
 * The job's attempt number, which fences its reply: attemptsStarted also counts restarts after a
 * stalled worker, and a job sent on from a worker's own queue goes on from the attempts it had there.
 */
export const attemptOf = (job: Job<QueuedJobData>): number =>
  (('attemptBase' in job.data && job.data.attemptBase) || 0) + Math.max(1, job.attemptsStarted);

/** Whether BullMQ runs the job no more after `err`: none of its attempts is left, or it may not be retried. */
export const endsForGood = (err: unknown, job: Job): boolean =>
  !(err instanceof WaitingError) &&
  !(err instanceof TakenOver) &&
  // BullMQ counts an attempt as made once it has failed or finished: this one is not counted yet.
  (err instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1));

/**
 * Ends a job whose run was stopped: a client cancel fails it for good; a shutdown hands it back to
 * the queue without spending an attempt, for another worker to continue; a lost lock means another
 * worker has it already.
 */
export async function stopped(job: Job, token: string | undefined, signal: AbortSignal): Promise<never> {
  if (signal.reason === STOP.shutdown && token) {
    await job.moveToWait(token);
    throw new WaitingError('Handed back: the worker is shutting down.');
  }
  if (signal.reason === STOP.lostLock) throw new TakenOver('The job was taken over after this worker lost its lock.');
  throw new UnrecoverableError('The request was cancelled by the client.');
}

/** The 500 a job's reader is told when the job failed for `reason`, named by the kind of job. */
export const serverFailure = (data: QueuedJobData, reason: string): { code: ErrorCode; message: string } =>
  isEmbedJob(data)
    ? { code: ErrorCode.embeddingFailed, message: `Embedding failed: ${reason}` }
    : isTokenizeJob(data)
      ? { code: ErrorCode.tokenizeFailed, message: `Tokenizing failed: ${reason}` }
      : { code: ErrorCode.generationFailed, message: `Generation failed: ${reason}` };

/**
 * Tells the job's reader how its run failed, when that is the job's last word, and returns what to
 * throw to BullMQ: input no retry can fix is a 400 on any attempt and fails the job for good; any
 * other failure is a 500 once the job ends for good; an attempt that is retried, handed back or
 * taken over says nothing.
 */
export async function reportFailure(sink: ReplySink, err: unknown, job: Job<QueuedJobData>): Promise<unknown> {
  if (err instanceof EngineInputError) {
    await sink.fail(400, err.code, err.message, err.param);
    return new UnrecoverableError(err.message);
  }
  // Checked output that failed its check again on the run's own retry: running the job again would not help.
  if (err instanceof EngineOutputError) {
    await sink.fail(500, err.code, err.message).catch(() => undefined);
    return new UnrecoverableError(err.message);
  }
  if (endsForGood(err, job)) {
    const { code, message } = serverFailure(job.data, (err as Error).message);
    await sink.fail(500, code, message).catch(() => undefined);
  }
  return err;
}

/**
 * A job taken after its request's deadline (`deadlineAt`) runs nothing: its client has been told, or is
 * about to be, that the deadline passed. Its reply fails with 504 and the job ends for good; returns
 * normally when the job is still in time or has no deadline.
 */
export async function refuseIfExpired(data: QueuedJobData, sink: ReplySink, started: number): Promise<void> {
  if (data.deadlineAt === undefined || started < data.deadlineAt) return;
  const message = `The request's deadline passed after ${started - data.enqueuedAt} ms in the queue; it was not run.`;
  await sink.fail(504, ErrorCode.deadlineExceeded, message);
  throw new UnrecoverableError(message);
}
