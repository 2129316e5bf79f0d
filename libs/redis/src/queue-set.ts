import { Queue, type QueueBaseOptions } from 'bullmq';
import type { RedisClient } from './redis-connections.js';

/**
 * The BullMQ queues a process sends to, by name: each made on first use on the process's one command
 * connection (which closing a queue leaves open), logging its errors, and all closed together.
 */
export class QueueSet<Data> {
  private readonly queues = new Map<string, Queue<Data>>();

  constructor(
    private readonly connection: RedisClient,
    private readonly prefix: string,
    private readonly warn: (message: string) => void,
    /** Options every queue gets besides (its tracing). */
    private readonly extra: () => Partial<QueueBaseOptions> = () => ({}),
  ) {}

  get(name: string): Queue<Data> {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue<Data>(name, { connection: this.connection, prefix: this.prefix, ...this.extra() });
      queue.on('error', (err) => this.warn(`Queue ${name}: ${err.message}`));
      this.queues.set(name, queue);
    }
    return queue;
  }

  /** Closes one queue and forgets it (its keys gone): a later `get` makes it again. */
  async drop(name: string): Promise<void> {
    const queue = this.queues.get(name);
    this.queues.delete(name);
    await queue?.close();
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
  }
}
