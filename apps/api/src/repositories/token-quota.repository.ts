import { Inject, Injectable } from '@nestjs/common';
import type { Result } from 'ioredis';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { batchTokenHoldKey, tokenHoldKey, tokenWindowKey, type TokenWindowWidth } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import {
  TOKEN_WINDOW_MS,
  TokenQuotas,
  tokenWindowEnd,
  tokenWindowOf,
  type TokenLimits,
  type TokenReservation,
} from './token-quotas.port.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    reserveTokens(
      minute: string,
      day: string,
      hold: string,
      tokens: number,
      minuteLimit: number,
      dayLimit: number,
      minuteMs: number,
      dayMs: number,
      holdMs: number,
    ): Result<[number, number, number], Context>;
    settleTokens(
      hold: string,
      reservedMinute: string,
      reservedDay: string,
      minute: string,
      day: string,
      used: number,
      minuteMs: number,
      dayMs: number,
    ): Result<number, Context>;
    reserveBatchTokens(
      day: string,
      hold: string,
      tokens: number,
      lines: number,
      dayLimit: number,
      dayMs: number,
      holdMs: number,
    ): Result<[number, number], Context>;
    settleBatchTokens(
      hold: string,
      reservedDay: string,
      day: string,
      used: number,
      lines: number,
      ended: 0 | 1,
      dayMs: number,
    ): Result<number, Context>;
  }
}

/** A window's counter outlives its window by this much, so a reply settled just after its end still finds it. */
const WINDOW_SLACK_MS = 60_000;
/**
 * How long a hold is kept: past the day it was reserved in. A hold that lapses unsettled (its replica
 * stopped and nobody resumed the reply) leaves its reservation counted: the quota errs on the safe side.
 */
const HOLD_MS = TOKEN_WINDOW_MS.day + 3_600_000;
/** A batch's hold: past the longest a batch may run (its completion window, then draining). */
const BATCH_HOLD_MS = 3 * TOKEN_WINDOW_MS.day;

/** Token counters per key and window, and the holds of requests and batches, in Redis: shared by every replica. */
@Injectable()
export class TokenQuotaRepository extends TokenQuotas {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  async reserve(
    keyName: string,
    requestId: string,
    tokens: number,
    limits: TokenLimits,
    at: number,
  ): Promise<TokenReservation> {
    const [verdict, minute, day] = await this.redis.reserveTokens(
      this.window(keyName, 'minute', at),
      this.window(keyName, 'day', at),
      tokenHoldKey(this.config.redis.prefix, keyName, requestId),
      tokens,
      limits.perMinute ?? 0,
      limits.perDay ?? 0,
      lifetime('minute', at),
      lifetime('day', at),
      HOLD_MS,
    );
    return {
      refusedBy: verdict === 1 ? null : verdict === 0 ? 'minute' : 'day',
      used: { minute: Number(minute), day: Number(day) },
    };
  }

  async settle(keyName: string, requestId: string, reservedAt: number, used: number, now: number): Promise<boolean> {
    const held = await this.redis.settleTokens(
      tokenHoldKey(this.config.redis.prefix, keyName, requestId),
      this.window(keyName, 'minute', reservedAt),
      this.window(keyName, 'day', reservedAt),
      this.window(keyName, 'minute', now),
      this.window(keyName, 'day', now),
      used,
      lifetime('minute', now),
      lifetime('day', now),
    );
    return Number(held) >= 0;
  }

  async reserveBatch(
    keyName: string,
    batchId: string,
    tokens: number,
    lines: number,
    perDay: number,
    at: number,
  ): Promise<{ reserved: boolean; dayUsed: number }> {
    const [verdict, day] = await this.redis.reserveBatchTokens(
      this.window(keyName, 'day', at),
      batchTokenHoldKey(this.config.redis.prefix, keyName, batchId),
      tokens,
      lines,
      perDay,
      lifetime('day', at),
      BATCH_HOLD_MS,
    );
    return { reserved: verdict === 1, dayUsed: Number(day) };
  }

  async settleBatch(
    keyName: string,
    batchId: string,
    reservedAt: number,
    settled: { lines: number; used: number; ended: boolean },
    now: number,
  ): Promise<void> {
    await this.redis.settleBatchTokens(
      batchTokenHoldKey(this.config.redis.prefix, keyName, batchId),
      this.window(keyName, 'day', reservedAt),
      this.window(keyName, 'day', now),
      settled.used,
      settled.lines,
      settled.ended ? 1 : 0,
      lifetime('day', now),
    );
  }

  private window(keyName: string, width: TokenWindowWidth, at: number): string {
    return tokenWindowKey(this.config.redis.prefix, keyName, width, tokenWindowOf(width, at));
  }
}

/** How long the counter of the window `at` falls in is kept, from `at`: to its end, and a little past. */
const lifetime = (width: TokenWindowWidth, at: number): number => tokenWindowEnd(width, at) - at + WINDOW_SLACK_MS;
