import { Injectable } from '@nestjs/common';
import type { ApiKeyConfig } from '@conveyor/config';
import { RateLimits } from '../repositories/rate-limits.port.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends. */
  resetSeconds: number;
}

/** Fixed-window request limits per API key; the counters are shared by every API replica. */
@Injectable()
export class RateLimiter {
  constructor(private readonly counters: RateLimits) {}

  /** Counts one request against the key; null when the key has no limit. */
  async consume(key: ApiKeyConfig, now = Date.now()): Promise<RateDecision | null> {
    if (!key.rateLimit) return null;
    const { requests, perSeconds } = key.rateLimit;
    const windowMs = perSeconds * 1000;
    const window = Math.floor(now / windowMs);
    const count = await this.counters.increment(key.name, window, windowMs);
    return {
      allowed: count <= requests,
      limit: requests,
      remaining: Math.max(0, requests - count),
      resetSeconds: Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000)),
    };
  }
}
