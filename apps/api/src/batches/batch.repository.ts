import { randomBytes } from 'node:crypto';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { activeBatchesKey, batchIndexKey, batchKey } from '@conveyor/queue';
import type { Redis } from 'ioredis';
import { createRedis } from '../platform/redis-connection.factory.js';
import type { BatchRecord } from './batch-record.js';

const BATCH_ID = /^batch_[a-f0-9]{24}$/;

export const newBatchId = (): string => `batch_${randomBytes(12).toString('hex')}`;
export const isBatchId = (id: string): boolean => BATCH_ID.test(id);

type Counter = 'total' | 'completed' | 'failed';

/** Batch records in Redis: a hash per batch, an index by creation time, and the set the runner drives. */
@Injectable()
export class BatchRepository implements OnApplicationShutdown {
  readonly redis: Redis;
  private readonly prefix: string;

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig) {
    this.redis = createRedis(config.redis.url, 'conveyor-api-batches');
    this.prefix = config.redis.prefix;
  }

  async create(record: BatchRecord): Promise<void> {
    await this.redis
      .multi()
      .hset(batchKey(this.prefix, record.id), serialize(record))
      .zadd(batchIndexKey(this.prefix), record.created_at, record.id)
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

  async count(id: string, counter: Counter, by: number): Promise<void> {
    if (by) await this.redis.hincrby(batchKey(this.prefix, id), counter, by);
  }

  async active(): Promise<string[]> {
    return this.redis.smembers(activeBatchesKey(this.prefix));
  }

  async retire(id: string): Promise<void> {
    await this.redis.srem(activeBatchesKey(this.prefix), id);
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

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}

function serialize(fields: Partial<BatchRecord>): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, JSON.stringify(v)]));
}

function deserialize(hash: Record<string, string>): BatchRecord {
  return Object.fromEntries(Object.entries(hash).map(([k, v]) => [k, JSON.parse(v)])) as unknown as BatchRecord;
}
