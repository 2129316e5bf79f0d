import { REPLY_EVENT_FIELD, type FinishReason, type TokenUsage, type UnnumberedReplyEvent } from '@conveyor/queue';
import type { Redis } from 'ioredis';

/**
 * Appends one request attempt's events to its reply stream. Text produced in
 * the same event-loop tick is coalesced into one event, so the Redis cost is
 * per tick, not per token. Writes are not awaited one by one: a single
 * connection keeps them in order, and `end`/`fail` wait for the last.
 */
export class ReplyPublisher {
  private pending = '';
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
    this.append({ type: 'start', attempt: this.attempt, promptTokens, resumed }, true);
  }

  text(text: string): void {
    if (!text) return;
    this.pending += text;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  async end(finishReason: FinishReason, usage: TokenUsage): Promise<void> {
    this.flush();
    this.append({ type: 'end', attempt: this.attempt, finishReason, usage }, true);
    await this.settled();
  }

  async fail(status: number, code: string, message: string): Promise<void> {
    this.flush();
    this.append({ type: 'error', attempt: this.attempt, status, code, message }, true);
    await this.settled();
  }

  private flush(): void {
    this.flushScheduled = false;
    if (!this.pending) return;
    const text = this.pending;
    this.pending = '';
    this.append({ type: 'delta', attempt: this.attempt, text }, false);
  }

  private append(event: UnnumberedReplyEvent, refreshTtl: boolean): void {
    // Plain commands only: with auto-pipelining they share one ordered batch, whereas a MULTI
    // would be sent ahead of it and could overtake the text written before it.
    const write = this.redis.xadd(this.key, '*', REPLY_EVENT_FIELD, JSON.stringify({ ...event, seq: this.seq++ }));
    const ttl = refreshTtl ? this.redis.pexpire(this.key, this.ttlMs) : null;
    this.lastWrite = Promise.all([write, ttl]).catch((err: Error) => {
      this.writeError ??= err;
    });
  }

  private async settled(): Promise<void> {
    await this.lastWrite;
    if (this.writeError) throw this.writeError;
  }
}
