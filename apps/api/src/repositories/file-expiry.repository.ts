import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { fileExpiriesKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import { FileExpiries } from './file-expiries.port.js';

/** File expiries in one sorted set, each file scored by when it expires: one command per call. */
@Injectable()
export class FileExpiryRepository extends FileExpiries {
  private readonly redis: RedisClient;
  private readonly key: string;

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig, { redis }: CommandConnection) {
    super();
    this.redis = redis;
    this.key = fileExpiriesKey(config.redis.prefix);
  }

  async expire(ids: readonly string[], at: number): Promise<void> {
    if (ids.length) await this.redis.zadd(this.key, 'NX', ...ids.flatMap((id) => [at, id]));
  }

  async expiresAt(ids: readonly string[]): Promise<(number | null)[]> {
    if (!ids.length) return [];
    const scores = await this.redis.zmscore(this.key, ...ids);
    return scores.map((s) => (s === null ? null : Number(s)));
  }

  due(now: number, count: number): Promise<string[]> {
    return this.redis.zrangebyscore(this.key, '-inf', now, 'LIMIT', 0, count);
  }

  async forget(id: string): Promise<void> {
    await this.redis.zrem(this.key, id);
  }
}
