import { Injectable, Logger } from '@nestjs/common';
import type { ResponseInputItem, ResponseObject, ResponseOutputItem } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { toOpenAiError } from '../errors/to-openai-error.js';
import type { ReplyRun } from '../contracts/reply-run.js';
import { ResponseStore, type StoredResponse } from '../repositories/response-store.port.js';
import { ResponseEventFormatter } from './response-events.mapper.js';
import { pendingResponse, type OutputOptions, type ResponseEcho } from './response.mapper.js';

/** A response whose job is queued: its reply, what its body repeats, and what storing it needs. */
export interface StartedResponse {
  run: ReplyRun;
  echo: ResponseEcho;
  /** The conversation up to and including its input (instructions aside). */
  conversation: ResponseInputItem[];
  /** Whether it was stored as asked (false when not asked, or when the store failed). */
  stored: boolean;
  /** How its output items are made (reasoning's `encrypted_content` when asked). */
  options: OutputOptions;
}

/**
 * The one place a stored response's record is written, whatever takes its reply (a body, a stream, a
 * background follower): saved as it is queued (`begin`), then each step as the reply's events pass
 * through `record`, or cancelled by its client (`cancelled`).
 */
@Injectable()
export class ResponseOutcomes {
  private readonly logger = new Logger(ResponseOutcomes.name);

  constructor(private readonly store: ResponseStore) {}

  /**
   * Saves a response as it is queued (its status queued or in progress), with its input and the
   * conversation it continues; false when the store failed, and then nothing more is stored of it: the
   * reply still reaches its client, only retrieving or continuing it later is lost.
   */
  async begin(record: StoredResponse): Promise<boolean> {
    return this.store.save(record).then(
      () => true,
      (err: Error) => {
        this.logger.warn(`Could not store response ${record.response.id}: ${err.message}`);
        return false;
      },
    );
  }

  /** Stores a response as cancelled by its client; null when it had ended meanwhile (it stays as it ended). */
  async cancelled(response: ResponseObject): Promise<ResponseObject | null> {
    const cancelled: ResponseObject = { ...response, status: 'cancelled' };
    return (await this.store.advance(cancelled)) ? cancelled : null;
  }

  /** The started response with its reply's events recorded as they are taken. */
  record(started: StartedResponse): RecordedResponse {
    return new RecordedResponse(started, this);
  }

  /** Stores a background response as taken by a worker. */
  async progressed(started: StartedResponse): Promise<void> {
    await this.store.advance(pendingResponse(started.run.who, started.echo, 'in_progress')).catch(() => undefined);
  }

  /** Stores a finished response, and the conversation a continuation starts from. */
  async finished(started: StartedResponse, response: ResponseObject): Promise<void> {
    if (!started.stored) return;
    const context: ResponseInputItem[] = [...started.conversation, ...response.output.map(asInput)];
    await this.store.advance(response, context).catch((err: Error) => {
      this.logger.warn(`Could not store response ${response.id}: ${err.message}`);
    });
  }

  /** Stores a response that ended in an error (never one cancelled meanwhile). */
  async failed(started: StartedResponse, err: unknown): Promise<void> {
    if (!started.stored) return;
    await this.failedAs(pendingResponse(started.run.who, started.echo, 'failed'), err);
  }

  /** Stores `response` as failed with `err` (never one that ended meanwhile). */
  async failedAs(response: ResponseObject, err: unknown): Promise<void> {
    const error = toOpenAiError(err);
    const failed: ResponseObject = {
      ...response,
      status: 'failed',
      error: { code: error.code ?? 'server_error', message: error.message },
    };
    await this.store.advance(failed).catch(() => undefined);
  }
}

/**
 * A started response whose reply, as its taker reads `run.events`, builds the response (with the one
 * builder a stream's events come from) and stores each step: in progress when a worker takes a
 * background one, then finished, or failed with the error that ended it.
 */
export class RecordedResponse {
  /** The reply to take: its events are the started run's, recorded as they pass. */
  readonly run: ReplyRun;
  private builder: ResponseEventFormatter;
  /** Its end is stored, or left to a replica that takes it over. */
  private settled = false;

  constructor(
    readonly started: StartedResponse,
    private readonly outcomes: ResponseOutcomes,
  ) {
    this.builder = this.newBuilder();
    this.run = { ...started.run, events: this.pass() };
  }

  get echo(): ResponseEcho {
    return this.started.echo;
  }

  /** Takes the whole reply: the finished response, or the failure that ended it thrown (stored either way). */
  async drain(): Promise<ResponseObject> {
    for await (const event of this.run.events) if (event.type === 'end') break;
    const result = this.builder.result;
    if (!result) throw ended();
    return result;
  }

  /** After a taker stopped early (a stream that ended itself): a reply not finished is stored as failed. */
  async close(): Promise<void> {
    await this.run.events.return(undefined);
  }

  /** Stores nothing more: the replica that takes it over stores its end. */
  abandon(): void {
    this.settled = true;
  }

  private async *pass(): ReplyRun['events'] {
    let taken = false;
    try {
      for await (const event of this.started.run.events) {
        if (event.type === 'start') {
          // A reply that starts over replaces what came before, as a gathered reply does.
          if (!event.resumed) this.builder = this.newBuilder();
          if (!taken && this.started.echo.background && !this.settled) await this.outcomes.progressed(this.started);
          taken = true;
        } else if (event.type === 'delta') this.builder.delta(event);
        else if (event.type === 'end') {
          this.builder.final(event);
          if (!this.settled) await this.outcomes.finished(this.started, this.builder.result!);
          this.settled = true;
          yield event;
          return;
        }
        yield event;
      }
      throw ended();
    } catch (err) {
      // A cancelled response stays cancelled: the store keeps the first end it is given.
      if (!this.settled) await this.outcomes.failed(this.started, err);
      this.settled = true;
      throw err;
    } finally {
      if (!this.settled) await this.outcomes.failed(this.started, ended());
      this.settled = true;
    }
  }

  private newBuilder(): ResponseEventFormatter {
    return new ResponseEventFormatter(this.started.run.who, this.started.echo, this.started.options);
  }
}

const ended = () => OpenAiHttpError.unavailable('The reply ended before the response was complete.');

/** An output item as the next turn's input carries it. */
const asInput = (item: ResponseOutputItem): ResponseInputItem => item;
