import type { ReplyEvent } from '@conveyor/queue';

/**
 * The events of one request's reply stream, as an async iterator. The relay
 * pushes; the consumer pulls. `fail` ends the iteration with an error (a
 * deadline, a client that left), `close` ends it quietly.
 */
export class ReplySubscription implements AsyncIterableIterator<ReplyEvent> {
  /** Last stream entry id delivered; the relay reads on from here. */
  lastId = '0';
  private readonly buffer: ReplyEvent[] = [];
  private waiter: { resolve: (r: IteratorResult<ReplyEvent>) => void; reject: (e: unknown) => void } | null = null;
  private failure: unknown = null;
  private failed = false;
  private closed = false;

  constructor(
    readonly key: string,
    private readonly onClose: (sub: ReplySubscription) => void,
  ) {}

  push(events: readonly ReplyEvent[]): void {
    if (this.closed) return;
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
