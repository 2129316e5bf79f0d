import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { encodeReplyGroup, readReplyHistory, replyRecordKey, type ReplyEvent } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import { FlushCadence } from './flush-cadence.js';
import type { ReplySink } from './reply-sink.js';
import { ReplyStreamSink, type OutboxNotifier } from './reply-stream.sink.js';
import { ReplyStreams, type ReplyAddress } from './reply-streams.port.js';

/** An inbox's expiry is renewed at most this often by each worker writing to it. */
const RENEW_EXPIRY_MS = 10_000;

/**
 * The reply outbox on Redis. A flush writes, per API replica, ONE inbox entry holding every reply's
 * new events (a field per reply), then the records of the replies that ended, on the worker's command
 * connection with auto-pipelining, so they reach Redis in that order and in one round trip. An inbox is trimmed
 * of entries older than a request may live (MINID, as part of the XADD: no command of its own) and
 * expires when no worker writes to it any more (its replica gone).
 */
@Injectable()
export class RedisReplyOutbox extends ReplyStreams implements OutboxNotifier {
  private readonly redis: RedisClient;
  private readonly dirty = new Set<ReplyStreamSink>();
  private readonly cadence = new FlushCadence(() => this.flush());
  /** When this worker last renewed each inbox's expiry. */
  private readonly renewed = new Map<string, number>();
  private readonly horizonMs: number;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
    // An entry is kept as long as a request may run, plus a minute for a client to resume it.
    this.horizonMs = config.api.requestTimeoutMs + 60_000;
  }

  notify(writer: ReplyStreamSink, urgent: boolean): void {
    this.dirty.add(writer);
    this.cadence.added(urgent);
  }

  roundEnded(): void {
    this.cadence.roundEnded();
  }

  private flush(): void {
    const writers = [...this.dirty];
    this.dirty.clear();
    const inboxes = new Map<string, { fields: string[]; records: string[][]; writers: ReplyStreamSink[] }>();
    for (const writer of writers) {
      const entry = writer.take();
      if (!entry) continue;
      let inbox = inboxes.get(entry.inbox);
      if (!inbox) inboxes.set(entry.inbox, (inbox = { fields: [], records: [], writers: [] }));
      if (entry.events.length) inbox.fields.push(entry.requestId, encodeReplyGroup(entry.events));
      if (entry.record) inbox.records.push([replyRecordKey(this.config.redis.prefix, entry.requestId), entry.record]);
      inbox.writers.push(writer);
    }
    const now = Date.now();
    for (const [key, { fields, records, writers: batch }] of inboxes) {
      // Plain commands only: with auto-pipelining they go in order, whereas a MULTI would be sent ahead.
      const writes: Promise<unknown>[] = [];
      if (fields.length) writes.push(this.redis.xadd(key, 'MINID', '~', String(now - this.horizonMs), '*', ...fields));
      if (now - (this.renewed.get(key) ?? 0) >= RENEW_EXPIRY_MS) {
        this.renewed.set(key, now);
        writes.push(this.redis.pexpire(key, this.horizonMs));
      }
      for (const [recordKey, record] of records)
        writes.push(this.redis.set(recordKey!, record!, 'PX', this.config.redis.replyTtlMs));
      Promise.all(writes).then(
        () => batch.forEach((w) => w.written()),
        (err: Error) => batch.forEach((w) => w.written(err)),
      );
    }
  }

  async history({ inbox, requestId }: ReplyAddress, since: number): Promise<ReplyEvent[]> {
    return (await readReplyHistory(this.redis, this.config.redis.prefix, inbox, requestId, since)).events;
  }

  open(address: ReplyAddress, attempt: number, earlier: readonly ReplyEvent[]): ReplySink {
    return new ReplyStreamSink(this, address, attempt, earlier);
  }
}
