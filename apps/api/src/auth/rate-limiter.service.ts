import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type ApiKeyConfig, type PlatformConfig } from '@conveyor/config';
import { rateLimitKey } from '@conveyor/queue';
import type { Redis } from 'ioredis';
import { createRedis } from '../platform/redis-connection.factory.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends. */
  resetSeconds: number;
}

/**
 * Fixed-window request limits per API key, counted in Redis so every API
 * replica shares one budget per key.
 */
@Injectable()
export class RateLimiter implements OnApplicationShutdown {
  private readonly redis: Redis;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    this.redis = createRedis(config.redis.url, 'conveyor-api-ratelimit');
  }

  /** Counts one request against the key; null when the key has no limit. */
  async consume(key: ApiKeyConfig, now = Date.now()): Promise<RateDecision | null> {
    if (!key.rateLimit) return null;
    const { requests, perSeconds } = key.rateLimit;
    const windowMs = perSeconds * 1000;
    const window = Math.floor(now / windowMs);
    const redisKey = rateLimitKey(this.config.redis.prefix, key.name, window);
    const replies = await this.redis.multi().incr(redisKey).pexpire(redisKey, windowMs + 1000).exec();
    const count = Number(replies?.[0]?.[1] ?? 0);
    return {
      allowed: count <= requests,
      limit: requests,
      remaining: Math.max(0, requests - count),
      resetSeconds: Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000)),
    };
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
