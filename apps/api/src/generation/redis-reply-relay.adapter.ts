import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { decodeReplyGroup, readReplyHistory, replyInboxKey } from '@conveyor/queue';
import { CommandConnection, createRedis, type RedisClient } from '@conveyor/redis';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { ReplyRelay } from '../contracts/reply-relay.port.js';
import { ReplySubscription } from '../contracts/reply-subscription.js';

type XReadReply = [key: string, entries: [id: string, fields: string[]][]][] | null;

const BLOCK_MS = 2000;
const MAX_ENTRIES_PER_READ = 1024;
/** How often this replica trims its inbox of entries no reply it follows needs. */
const TRIM_EVERY_MS = 1000;
/** Entries younger than this stay, whatever is followed: a reply being subscribed to right now may need them. */
const TRIM_MARGIN_MS = 5000;

/** One blocking reader of one inbox, and the loop that hands its entries to the subscriptions. */
interface InboxReader {
  key: string;
  client: RedisClient;
  lastId: string;
  done: Promise<void>;
}

/**
 * The reply relay on Redis. Every worker sends the events of this replica's replies to its inbox, many
 * replies' events in one entry, so ONE blocking XREAD of one key reads them all (on a cluster, the
 * inbox's key is this replica's alone: its hash tag is the replica's name). A new subscription needs
 * nothing of Redis: the reader is already reading the inbox its events will come to.
 *
 * Following a reply under way (a resume) reads what it holds first — its record if it has ended, else
 * its events among the inbox's entries — and, when its job named another replica (one that stopped),
 * reads that replica's inbox too while the reply lasts.
 */
@Injectable()
export class RedisReplyRelay extends ReplyRelay implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(RedisReplyRelay.name);
  private readonly subs = new Map<string, ReplySubscription>();
  /** When each followed reply's events may start in this replica's inbox: what trimming keeps. */
  private readonly since = new Map<string, number>();
  readonly replica = randomBytes(8).toString('hex');
  private readonly inbox: string;
  /** The API's command connection: history reads and trims. Each reader has a connection of its own (startReader). */
  private readonly control: RedisClient;
  private readonly readers = new Map<string, InboxReader>();
  /** Which inbox each subscription of another replica's inbox reads. */
  private readonly foreign = new Map<string, string>();
  private stopped = false;
  private trimTimer: NodeJS.Timeout | null = null;
  private readSinceTrim = false;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.inbox = replyInboxKey(config.redis.prefix, this.replica);
    this.control = redis;
  }

  onModuleInit(): void {
    this.startReader(this.inbox, Date.now());
    this.trimTimer = setInterval(() => void this.trim(), TRIM_EVERY_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.trimTimer) clearInterval(this.trimTimer);
    for (const sub of this.subs.values()) sub.fail(new Error('The server is shutting down.'));
    const readers = [...this.readers.values()];
    for (const reader of readers) reader.client.disconnect();
    await Promise.all(readers.map((r) => r.done.catch(() => undefined)));
  }

  get open(): number {
    return this.subs.size;
  }

  subscribe(requestId: string): ReplySubscription {
    this.since.set(requestId, Date.now());
    return this.register(requestId);
  }

  follow(requestId: string, replica: string, since: number): ReplySubscription {
    const inbox = replyInboxKey(this.config.redis.prefix, replica);
    const sub = this.register(requestId);
    sub.awaitBackfill();
    if (inbox === this.inbox) this.since.set(requestId, since);
    else {
      // Read live before the history is, so nothing falls between them; the fence drops what both read.
      this.foreign.set(requestId, inbox);
      if (!this.readers.has(inbox)) this.startReader(inbox, Date.now());
    }
    readReplyHistory(this.control, this.config.redis.prefix, inbox, requestId, since).then(
      ({ events }) => sub.backfill(events),
      (err: Error) => sub.fail(OpenAiHttpError.unavailable(`The reply could not be read: ${err.message}`)),
    );
    return sub;
  }

  fail(requestId: string, error: unknown): void {
    this.subs.get(requestId)?.fail(error);
  }

  failAll(error: unknown): void {
    for (const sub of this.subs.values()) sub.fail(error);
  }

  private register(requestId: string): ReplySubscription {
    this.subs.get(requestId)?.fail(new Error('superseded by a newer subscription'));
    const sub = new ReplySubscription(requestId, (s) => {
      if (this.subs.get(s.requestId) !== s) return;
      this.subs.delete(s.requestId);
      this.since.delete(s.requestId);
      this.foreign.delete(s.requestId);
    });
    this.subs.set(requestId, sub);
    return sub;
  }

  /**
   * Reads `key` from `fromMs` on, for as long as it is this replica's inbox or a subscription reads it,
   * on a connection of its own: XREAD BLOCK holds its connection for up to BLOCK_MS, so on the shared
   * one every other command would wait behind it.
   */
  private startReader(key: string, fromMs: number): void {
    const own = key === this.inbox;
    const reader: InboxReader = {
      key,
      client: createRedis(this.config.redis, `conveyor-api-relay${own ? '' : '-foreign'}`, 'blocking', this.logger),
      lastId: `${fromMs}-0`,
      done: Promise.resolve(),
    };
    this.readers.set(key, reader);
    reader.done = this.read(reader, own).finally(() => {
      this.readers.delete(key);
      reader.client.disconnect();
    });
  }

  private async read(reader: InboxReader, own: boolean): Promise<void> {
    const wanted = () => own || [...this.foreign.values()].includes(reader.key);
    while (!this.stopped && wanted()) {
      let reply: XReadReply;
      try {
        reply = (await reader.client.xread(
          'COUNT',
          MAX_ENTRIES_PER_READ,
          'BLOCK',
          BLOCK_MS,
          'STREAMS',
          reader.key,
          reader.lastId,
        )) as XReadReply;
      } catch (err) {
        if (this.stopped) break;
        // Redis is unreachable: subscribers keep waiting and their own deadlines decide.
        this.logger.warn(`Reply relay read failed: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      for (const [, entries] of reply ?? []) {
        if (!entries.length) continue;
        reader.lastId = entries[entries.length - 1]![0];
        this.readSinceTrim ||= own;
        for (const [, fields] of entries) {
          for (let i = 0; i + 1 < fields.length; i += 2) {
            const sub = this.subs.get(fields[i]!);
            if (sub) sub.push(decodeReplyGroup(fields[i + 1]!));
          }
        }
      }
    }
  }

  /**
   * Drops the inbox's entries no followed reply needs: those before the oldest reply this replica
   * follows began (workers also trim what is older than a request may live, as they write).
   */
  private async trim(): Promise<void> {
    if (!this.readSinceTrim) return;
    this.readSinceTrim = false;
    const oldest = Math.min(Date.now() - TRIM_MARGIN_MS, ...this.since.values());
    await this.control.xtrim(this.inbox, 'MINID', '~', String(oldest - 1000)).catch(() => undefined);
  }
}
