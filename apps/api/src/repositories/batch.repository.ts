import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { activeBatchesKey, batchIndexKey, batchKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { endedEvent, type BatchEnding, type BatchRecord } from './batch-record.js';
import { BatchRecords, type BatchCounter } from './batch-records.port.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    endBatch(record: string, ...fields: string[]): Result<number, Context>;
  }
}

/** Batch records in Redis: a hash per batch, an index by creation time, and the set the runner drives. */
@Injectable()
export class BatchRepository extends BatchRecords {
  private readonly redis: RedisClient;
  private readonly prefix: string;

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig, { redis }: CommandConnection) {
    super();
    this.redis = redis;
    this.prefix = config.redis.prefix;
  }

  /**
   * The record first, then the index and the active set together (one slot on a cluster, where the
   * record is in its batch's own): a batch is listed and driven only once its record is there, and a
   * record left alone by a failure in between is never listed, its client having been told of the failure.
   */
  async create(record: BatchRecord): Promise<void> {
    await this.redis.hset(batchKey(this.prefix, record.id), serialize(record));
    await this.redis
      .multi()
      // By the millisecond (created_at has whole seconds): batches made in the same second list newest first too.
      .zadd(batchIndexKey(this.prefix), Date.now(), record.id)
      .sadd(activeBatchesKey(this.prefix), record.id)
      .exec();
  }

  async get(id: string): Promise<BatchRecord | null> {
    const hash = await this.redis.hgetall(batchKey(this.prefix, id));
    return Object.keys(hash).length ? deserialize(hash) : null;
  }

  async update(id: string, fields: Partial<BatchRecord>): Promise<void> {
    await this.redis.hset(batchKey(this.prefix, id), serialize(fields));
  }

  /** See scripts/end-batch.lua: the status and the event in one step, once. */
  async end(id: string, ending: BatchEnding): Promise<boolean> {
    const fields = serialize({ ...ending, ended_event: endedEvent(id, ending.status) });
    return (await this.redis.endBatch(batchKey(this.prefix, id), ...Object.entries(fields).flat())) === 1;
  }

  async count(id: string, counter: BatchCounter, by: number): Promise<void> {
    if (by) await this.redis.hincrby(batchKey(this.prefix, id), counter, by);
  }

  async active(): Promise<string[]> {
    return this.redis.smembers(activeBatchesKey(this.prefix));
  }

  async retire(id: string): Promise<void> {
    await this.redis.srem(activeBatchesKey(this.prefix), id);
  }

  /** The index first: a batch is never listed without its record. */
  async delete(id: string): Promise<void> {
    await this.redis.multi().zrem(batchIndexKey(this.prefix), id).srem(activeBatchesKey(this.prefix), id).exec();
    await this.redis.del(batchKey(this.prefix, id));
  }

  /** Ids newest first, starting after `after`. */
  async idsAfter(after: string | undefined, count: number): Promise<string[]> {
    const key = batchIndexKey(this.prefix);
    let start = 0;
    if (after) {
      const rank = await this.redis.zrevrank(key, after);
      if (rank === null) return [];
      start = rank + 1;
    }
    return this.redis.zrevrange(key, start, start + count - 1);
  }
}

function serialize(fields: Partial<BatchRecord>): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, JSON.stringify(v)]));
}

function deserialize(hash: Record<string, string>): BatchRecord {
  return Object.fromEntries(Object.entries(hash).map(([k, v]) => [k, JSON.parse(v)])) as unknown as BatchRecord;
}
