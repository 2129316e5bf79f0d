import type { ReplyEvent } from '@conveyor/queue';

/**
 * The events of one request's reply, as an async iterator. The relay pushes; the consumer pulls.
 * `fail` ends the iteration with an error (a deadline, a client that left), `close` ends it quietly.
 *
 * A subscription that follows a reply already under way is first filled with what was written before
 * it (`backfill`); events pushed live meanwhile are held and come after, so the reply reads in order
 * (the repeats among them are the reader's fence's to drop).
 */
export class ReplySubscription implements AsyncIterableIterator<ReplyEvent> {
  private readonly buffer: ReplyEvent[] = [];
  /** Live events that came while the backfill was being read; null when none is awaited. */
  private held: ReplyEvent[] | null = null;
  private waiter: { resolve: (r: IteratorResult<ReplyEvent>) => void; reject: (e: unknown) => void } | null = null;
  private failure: unknown = null;
  private failed = false;
  private closed = false;

  constructor(
    readonly requestId: string,
    private readonly onClose: (sub: ReplySubscription) => void,
  ) {}

  /** Live events will be held until `backfill` hands over what came before them. */
  awaitBackfill(): void {
    this.held ??= [];
  }

  /** What the reply held before this subscription; then the live events held meanwhile. */
  backfill(events: readonly ReplyEvent[]): void {
    const held = this.held ?? [];
    this.held = null;
    this.push([...events, ...held]);
  }

  push(events: readonly ReplyEvent[]): void {
    if (this.closed) return;
    if (this.held) {
      this.held.push(...events);
      return;
    }
    this.buffer.push(...events);
    this.settle();
  }

  fail(error: unknown): void {
    if (this.closed || this.failed) return;
    this.failed = true;
    this.failure = error;
    this.settle();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose(this);
    this.settle();
  }

  private settle(): void {
    if (!this.waiter) return;
    const { resolve, reject } = this.waiter;
    if (this.buffer.length) {
      this.waiter = null;
      resolve({ value: this.buffer.shift() as ReplyEvent, done: false });
    } else if (this.failed) {
      this.waiter = null;
      reject(this.failure);
    } else if (this.closed) {
      this.waiter = null;
      resolve({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<ReplyEvent>> {
    if (this.buffer.length) return Promise.resolve({ value: this.buffer.shift() as ReplyEvent, done: false });
    if (this.failed) return Promise.reject(this.failure);
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<ReplyEvent>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ReplyEvent> {
    return this;
  }
}
