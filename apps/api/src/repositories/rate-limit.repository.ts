import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { rateLimitKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import { RateLimits } from './rate-limits.port.js';

/** Request counters per API key and time window, in Redis so every API replica shares them. */
@Injectable()
export class RateLimitRepository extends RateLimits {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  /** Counts one request in the key's window `window` (of `windowMs`) and returns the window's count. */
  async increment(keyName: string, window: number, windowMs: number): Promise<number> {
    const key = rateLimitKey(this.config.redis.prefix, keyName, window);
    const replies = await this.redis
      .multi()
      .incr(key)
      .pexpire(key, windowMs + 1000)
      .exec();
    return Number(replies?.[0]?.[1] ?? 0);
  }
}
