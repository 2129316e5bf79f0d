import { ErrorCode, errorTypeFor } from '@conveyor/openai';
import { ReplyFence, type ReplyEvent, type TokenUsage } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import type { OutputEvent } from '../contracts/reply-run.js';

const LOST_EVENTS = 'Part of the reply was lost while Redis failed over; retry the request.';

/** The client went away; the reply is abandoned, not failed. */
export class ClientGone extends Error {}

/** A reply stream as the reader consumes it: its events in order, ended early by `fail`. */
export interface ReplySource extends AsyncIterable<ReplyEvent> {
  fail(error: unknown): void;
  close(): void;
}

/** An `error` event from the worker, as the HTTP error the client sees. */
export function replyError(event: Extract<ReplyEvent, { type: 'error' }>): OpenAiHttpError {
  return new OpenAiHttpError(event.status, errorTypeFor(event.status), event.message, event.param ?? null, event.code);
}

/**
 * How a reply ended: whether it finished, why not, and its usage. Decides whether the job
 * must be stopped: an abandoned reply cancels it, unless the API is shutting down (the job
 * keeps running so the client can resume the stream on another replica).
 */
export class ReplyOutcome {
  finished = false;
  label = 'abandoned';
  usage: TokenUsage | undefined;
  private shutdown = false;

  ended(event: Extract<ReplyEvent, { type: 'end' | 'error' }>): void {
    this.finished = true;
    if (event.type === 'end') {
      this.label = event.finishReason;
      this.usage = event.usage;
    } else this.label = event.code;
  }

  failed(err: unknown): void {
    this.shutdown = err instanceof OpenAiHttpError && err.code === ErrorCode.serverShuttingDown;
    if (this.label !== 'abandoned') return;
    this.label =
      err instanceof ClientGone ? 'client_gone' : err instanceof OpenAiHttpError ? (err.code ?? 'error') : 'error';
  }

  get cancelsJob(): boolean {
    return !this.finished && !this.shutdown;
  }
}

export interface DeadlineOptions {
  requestTimeoutMs: number;
  /** How long the job may wait for a worker; null when it is already running (a resumed stream). */
  queueTimeoutMs: number | null;
  /**
   * Called when no worker took the job in time: takes it back and returns the error to end the
   * reply with, or null when a worker took it after all.
   */
  onQueueTimeout(): Promise<Error | null>;
  /** The request's own deadline, in ms from now; null or absent: none. */
  deadlineMs?: number | null;
  /**
   * Called when the deadline passes: `takenAt` is when a worker took the job (null: none had yet, and
   * the job is to be taken back). Returns the error the reply ends with; a reply that ends so while its
   * job runs stops the job, as any unfinished reply does.
   */
  onDeadline?(takenAt: number | null): Promise<Error>;
  /** Called once, `stillQueuedMs` from now, unless a worker has taken the job or the reply has ended by then. */
  onStillQueued?(): void;
  stillQueuedMs?: number;
}

/**
 * The request's deadlines, each ending the reply by failing `source`: the server's request timeout,
 * the queue timeout until a worker takes the job, and the request's own deadline (its headers', its
 * key's or its deployment's), queued or running.
 */
export class ReplyDeadlines {
  private takenAt: number | null;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(source: Pick<ReplySource, 'fail'>, options: DeadlineOptions) {
    this.takenAt = options.queueTimeoutMs === null ? Date.now() : null;
    this.timers.push(
      setTimeout(() => source.fail(OpenAiHttpError.timeout(options.requestTimeoutMs)), options.requestTimeoutMs),
    );
    const fail = (error: Error | null) => error && source.fail(error);
    if (options.queueTimeoutMs !== null) {
      this.timers.push(
        setTimeout(() => {
          if (this.takenAt !== null) return;
          void options.onQueueTimeout().then(fail, () => undefined);
        }, options.queueTimeoutMs),
      );
    }
    const { deadlineMs, onDeadline, onStillQueued, stillQueuedMs } = options;
    if (onStillQueued && typeof stillQueuedMs === 'number' && this.takenAt === null) {
      this.timers.push(setTimeout(() => this.takenAt === null && onStillQueued(), stillQueuedMs));
    }
    if (typeof deadlineMs === 'number' && onDeadline) {
      this.timers.push(setTimeout(() => void onDeadline(this.takenAt).then(fail, () => undefined), deadlineMs));
    }
  }

  /** A worker has the job: the queue deadline no longer applies. */
  markTaken(): void {
    this.takenAt ??= Date.now();
  }

  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
  }
}

export interface ReplyReaderHooks {
  /** Every accepted event, before it is handed on (timing metrics). */
  observe(event: ReplyEvent): void;
  /** Once, however the reply ended; stops the job when the outcome says so. */
  finish(outcome: ReplyOutcome): Promise<void>;
}

/**
 * The per-request reply reader: one request's events, in order, from its reply stream. Late
 * events of a replaced attempt and repeats are dropped; an `error` event is raised as the HTTP
 * error; the reply ends at its `end` event, at a deadline, or when the client leaves.
 */
export async function* readReply(
  source: ReplySource,
  signal: AbortSignal,
  deadlines: ReplyDeadlines,
  hooks: ReplyReaderHooks,
): AsyncGenerator<OutputEvent, void, undefined> {
  const onAbort = () => source.fail(new ClientGone());
  signal.addEventListener('abort', onAbort, { once: true });
  const fence = new ReplyFence();
  const outcome = new ReplyOutcome();
  try {
    for await (const event of source) {
      deadlines.markTaken();
      const verdict = fence.verdict(event);
      if (verdict === 'drop') continue;
      // Handing on what follows a gap would give the client a reply with a piece missing; a retry gets it whole.
      if (verdict === 'gap') throw OpenAiHttpError.unavailable(LOST_EVENTS);
      hooks.observe(event);
      if (event.type === 'error') {
        outcome.ended(event);
        throw replyError(event);
      }
      // Recorded before yielding: a consumer that stops at the end event never resumes this generator.
      if (event.type === 'end') outcome.ended(event);
      yield event;
      if (outcome.finished) return;
    }
  } catch (err) {
    outcome.failed(err);
    throw err;
  } finally {
    deadlines.clear();
    signal.removeEventListener('abort', onAbort);
    source.close();
    await hooks.finish(outcome);
  }
}
