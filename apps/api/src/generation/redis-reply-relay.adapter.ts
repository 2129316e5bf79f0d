import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { parseReplyEntry } from '@conveyor/queue';
import type { Redis } from 'ioredis';
import { createRedis } from '@conveyor/redis';
import { ReplyRelay } from './reply-relay.port.js';
import { ReplySubscription } from './reply-subscription.js';

type XReadReply = [key: string, entries: [id: string, fields: string[]][]][] | null;

const BLOCK_MS = 2000;
const MAX_ENTRIES_PER_READ = 1024;

/**
 * The reply relay on Redis: reads every in-flight request's reply stream over ONE blocking connection:
 * a single XREAD names all subscribed keys. A new subscription interrupts the
 * blocked read (CLIENT UNBLOCK) so it is included at once. Streams are read
 * from the start, so events written before the subscription are never lost.
 */
@Injectable()
export class RedisReplyRelay extends ReplyRelay implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(RedisReplyRelay.name);
  private readonly subs = new Map<string, ReplySubscription>();
  private reader!: Redis;
  private control!: Redis;
  private readerId: number | null = null;
  private reading = false;
  private interrupting = false;
  private idle: (() => void) | null = null;
  private stopped = false;
  private loopDone: Promise<void> = Promise.resolve();

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    super();
  }

  onModuleInit(): void {
    this.reader = createRedis(this.config.redis, 'conveyor-api-relay', 'blocking', this.logger);
    this.control = createRedis(this.config.redis, 'conveyor-api-relay-control', 'command', this.logger);
    // The id changes on every reconnect; CLIENT UNBLOCK needs the current one.
    this.reader.on('ready', () => {
      this.reader.client('ID').then(
        (id) => (this.readerId = Number(id)),
        () => (this.readerId = null),
      );
    });
    this.loopDone = this.loop();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    for (const sub of this.subs.values()) sub.fail(new Error('The server is shutting down.'));
    this.idle?.();
    this.reader.disconnect();
    await this.loopDone.catch(() => undefined);
    this.control.disconnect();
  }

  /** Ends the reader of `key`, if this process has one, with `error`. */
  fail(key: string, error: unknown): void {
    this.subs.get(key)?.fail(error);
  }

  /** Ends every open reply with `error` (shutting down). */
  failAll(error: unknown): void {
    for (const sub of this.subs.values()) sub.fail(error);
  }

  get open(): number {
    return this.subs.size;
  }

  subscribe(key: string): ReplySubscription {
    const sub = new ReplySubscription(key, (s) => {
      if (this.subs.get(s.key) === s) this.subs.delete(s.key);
    });
    this.subs.get(key)?.fail(new Error('superseded by a newer subscription'));
    this.subs.set(key, sub);
    this.wake();
    return sub;
  }

  private wake(): void {
    if (this.idle) {
      const resume = this.idle;
      this.idle = null;
      resume();
    } else if (this.reading) {
      void this.interrupt();
    }
  }

  /** Unblocks the reader; retried briefly because the XREAD may not have reached Redis yet. */
  private async interrupt(): Promise<void> {
    if (this.interrupting) return;
    this.interrupting = true;
    try {
      for (let i = 0; i < 50 && this.reading && !this.stopped && this.readerId !== null; i++) {
        const unblocked = await this.control.client('UNBLOCK', this.readerId);
        if (unblocked === 1) return;
        await new Promise((r) => setTimeout(r, 1));
      }
    } catch (err) {
      this.logger.warn(`Could not interrupt the relay read: ${(err as Error).message}`);
    } finally {
      this.interrupting = false;
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      if (this.subs.size === 0) {
        await new Promise<void>((resume) => (this.idle = resume));
        continue;
      }
      const subs = [...this.subs.values()];
      let reply: XReadReply;
      this.reading = true;
      try {
        reply = (await this.reader.xread(
          'COUNT',
          MAX_ENTRIES_PER_READ,
          'BLOCK',
          BLOCK_MS,
          'STREAMS',
          ...subs.map((s) => s.key),
          ...subs.map((s) => s.lastId),
        )) as XReadReply;
      } catch (err) {
        if (this.stopped) break;
        // Redis is unreachable: subscribers keep waiting and their own deadlines decide.
        this.logger.warn(`Reply relay read failed: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 250));
        continue;
      } finally {
        this.reading = false;
      }
      for (const [key, entries] of reply ?? []) {
        const sub = this.subs.get(key);
        if (!sub || !entries.length) continue;
        sub.lastId = entries[entries.length - 1][0];
        sub.push(entries.flatMap(([, fields]) => parseReplyEntry(fields)));
      }
    }
  }
}
