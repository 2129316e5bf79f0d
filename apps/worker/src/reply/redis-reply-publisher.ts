import type { OutputPiece } from '@conveyor/engine';
import {
  replyEntryFields,
  type FinishReason,
  type ReplyEvent,
  type TokenUsage,
  type UnnumberedReplyEvent,
} from '@conveyor/queue';
import type { Redis } from 'ioredis';
import type { ReplySink } from './reply-sink.js';

type Pending = Omit<OutputPiece, 'choice'> & { text: string };

/** Within a reply, reasoning comes before text and text before a tool call; a coalesced event keeps that order. */
const rank = (piece: Omit<OutputPiece, 'choice'>): number =>
  piece.toolCall ? 2 : piece.text || piece.logprobs ? 1 : 0;

/**
 * Appends one request attempt's events to its reply stream. Output produced in
 * the same event-loop tick is coalesced into one event per choice, and all the
 * events of a tick (every choice's text, the end) go in one stream entry, so
 * the Redis cost is one command per tick, not per token, and a reader wakes
 * once for them. Writes are not awaited one by one: a single connection keeps
 * them in order, and `end`/`fail` wait for the last.
 */
export class RedisReplyPublisher implements ReplySink {
  private pending = new Map<number, Pending>();
  /** Events of this tick, in order, not yet written. */
  private outbox: ReplyEvent[] = [];
  private seq = 0;
  private flushScheduled = false;
  private lastWrite: Promise<unknown> = Promise.resolve();
  private writeError: Error | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly attempt: number,
    private readonly ttlMs: number,
  ) {}

  start(promptTokens: number, resumed: boolean): void {
    this.flush();
    this.write([{ type: 'start', attempt: this.attempt, promptTokens, resumed }], true);
  }

  output({ choice, ...piece }: OutputPiece): void {
    if (!piece.text && !piece.reasoning && !piece.toolCall && !piece.logprobs?.length) return;
    let held = this.pending.get(choice);
    const call = held?.toolCall;
    // A piece that would land before what is held (or a second call) goes in the next event instead.
    if (held && (rank(piece) < rank(held) || (piece.toolCall && call && piece.toolCall.index !== call.index))) {
      this.flushChoice(choice, held);
      held = undefined;
    }
    if (!held) this.pending.set(choice, (held = { text: '' }));
    if (piece.reasoning) held.reasoning = (held.reasoning ?? '') + piece.reasoning;
    if (piece.text) held.text += piece.text;
    if (piece.logprobs?.length) (held.logprobs ??= []).push(...piece.logprobs);
    if (piece.tokens !== undefined) held.tokens = piece.tokens;
    if (piece.toolCall)
      held.toolCall = held.toolCall
        ? { ...held.toolCall, arguments: held.toolCall.arguments + piece.toolCall.arguments }
        : { ...piece.toolCall };
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** `finishReasons`: every choice's, in choice order. */
  async end(finishReasons: readonly FinishReason[], usage: TokenUsage): Promise<void> {
    const many = finishReasons.length > 1 ? { finishReasons: [...finishReasons] } : {};
    this.write(
      [{ type: 'end', attempt: this.attempt, finishReason: finishReasons[0] ?? 'stop', ...many, usage }],
      true,
    );
    await this.settled();
  }

  async fail(status: number, code: string, message: string, param: string | null = null): Promise<void> {
    this.write([{ type: 'error', attempt: this.attempt, status, code, message, ...(param ? { param } : {}) }], true);
    await this.settled();
  }

  private flush(): void {
    this.write([], false);
  }

  private flushChoice(choice: number, held: Pending): void {
    this.pending.delete(choice);
    this.outbox.push(this.numbered({ type: 'delta', attempt: this.attempt, ...(choice ? { choice } : {}), ...held }));
  }

  private numbered(event: UnnumberedReplyEvent): ReplyEvent {
    return { ...event, seq: this.seq++ } as ReplyEvent;
  }

  /**
   * Writes what this tick holds, then `last`, as one stream entry. After a write has failed, none
   * follows: a later one could succeed (Redis back, or another primary after a failover) and leave a
   * hole in the reply its client is reading. The attempt ends with the error, and the job's retry
   * continues from what the stream holds.
   */
  private write(last: UnnumberedReplyEvent[], refreshTtl: boolean): void {
    this.flushScheduled = false;
    if (this.writeError) {
      this.pending.clear();
      this.outbox = [];
      return;
    }
    for (const [choice, held] of [...this.pending].sort(([a], [b]) => a - b)) this.flushChoice(choice, held);
    const events = [...this.outbox, ...last.map((e) => this.numbered(e))];
    this.outbox = [];
    if (!events.length) return;
    // Plain commands only: with auto-pipelining they share one ordered batch, whereas a MULTI
    // would be sent ahead of it and could overtake the text written before it.
    const write = this.redis.xadd(this.key, '*', ...replyEntryFields(events));
    const ttl = refreshTtl ? this.redis.pexpire(this.key, this.ttlMs) : null;
    this.lastWrite = Promise.all([write, ttl]).catch((err: Error) => {
      this.writeError ??= err;
    });
  }

  private async settled(): Promise<void> {
    await this.lastWrite;
    if (this.writeError) throw this.writeError;
  }

  /** One input's embedding (`vector`: little-endian float32 bytes, base64), written in order after any pending text. */
  embedding(index: number, vector: string): void {
    this.write([{ type: 'embedding', attempt: this.attempt, index, vector }], false);
  }
}
