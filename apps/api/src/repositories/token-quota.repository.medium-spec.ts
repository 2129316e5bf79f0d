import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformConfig } from '@conveyor/config';
import { batchTokenHoldKey, tokenHoldKey, tokenWindowKey, type TokenWindowWidth } from '@conveyor/queue';
import type { CommandConnection } from '@conveyor/redis';
import { untilConnected } from '../../../../test/support/connected.js';
import { apiRedis } from './api-redis.js';
import { TokenQuotaRepository } from './token-quota.repository.js';
import { tokenWindowOf } from './token-quotas.port.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('TokenQuotaRepository against real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  // Only the Redis settings are read by the repository.
  const config = { redis: { url, prefix } } as PlatformConfig;
  let redis: Redis;
  let connection: CommandConnection;
  let quotas: TokenQuotaRepository;
  let key: string;
  /** 10:30:15 UTC on a day of its own: a minute's windows and a day's, away from the clock. */
  const at = Date.UTC(2031, 4, 6, 10, 30, 15);
  const MINUTE = 60_000;
  const both = { perMinute: 1_000, perDay: 5_000 };
  const counted = async (width: TokenWindowWidth, when = at) =>
    Number((await redis.get(tokenWindowKey(prefix, key, width, tokenWindowOf(width, when)))) ?? 0);

  beforeAll(async () => {
    redis = new Redis(url);
    connection = apiRedis(config);
    quotas = new TokenQuotaRepository(config, connection);
    await untilConnected(() => quotas.settle('none', 'none', at, 0, at));
  });
  beforeEach(() => {
    key = `k-${randomBytes(4).toString('hex')}`;
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await connection.onApplicationShutdown();
    redis.disconnect();
  });

  it('reserves in both windows until either would go over, and refuses without reserving', async () => {
    expect(await quotas.reserve(key, 'a', 600, both, at)).toEqual({
      refusedBy: null,
      used: { minute: 600, day: 600 },
    });
    expect(await quotas.reserve(key, 'b', 500, both, at)).toEqual({
      refusedBy: 'minute',
      used: { minute: 600, day: 600 },
    });
    expect(await quotas.reserve(key, 'c', 400, both, at)).toEqual({
      refusedBy: null,
      used: { minute: 1_000, day: 1_000 },
    });
    expect(await redis.exists(tokenHoldKey(prefix, key, 'b'))).toBe(0);
    // The day refuses what the minute would take.
    const dayOnly = { perMinute: 10_000, perDay: 1_500 };
    expect(await quotas.reserve(key, 'd', 600, dayOnly, at + MINUTE)).toEqual({
      refusedBy: 'day',
      used: { minute: 0, day: 1_000 },
    });
    expect(await counted('minute')).toBe(1_000);
    expect(await counted('day')).toBe(1_000);
  });

  it('refunds what a reply did not use, and charges what it used past its reservation', async () => {
    await quotas.reserve(key, 'a', 600, both, at);
    await quotas.reserve(key, 'b', 300, both, at);
    expect(await quotas.settle(key, 'a', at, 150, at + 1_000)).toBe(true);
    expect(await counted('minute')).toBe(150 + 300);
    expect(await quotas.settle(key, 'b', at, 420, at + 2_000)).toBe(true);
    expect(await counted('minute')).toBe(150 + 420);
    expect(await counted('day')).toBe(150 + 420);
    // A reply whose end two replicas read settles once.
    expect(await quotas.settle(key, 'b', at, 420, at + 3_000)).toBe(false);
    expect(await counted('day')).toBe(150 + 420);
    expect(await redis.exists(tokenHoldKey(prefix, key, 'a'), tokenHoldKey(prefix, key, 'b'))).toBe(0);
  });

  it('settles a reply that ends in the next minute: the hold leaves its minute, the usage goes in the new one', async () => {
    await quotas.reserve(key, 'a', 800, both, at);
    const next = at + MINUTE;
    expect(await quotas.settle(key, 'a', at, 300, next)).toBe(true);
    expect(await counted('minute', at)).toBe(0);
    expect(await counted('minute', next)).toBe(300);
    expect(await counted('day')).toBe(300);
  });

  it("starts each window afresh, and keeps a window's counter only a little past its end", async () => {
    await quotas.reserve(key, 'a', 1_000, both, at);
    expect((await quotas.reserve(key, 'b', 1, both, at)).refusedBy).toBe('minute');
    expect((await quotas.reserve(key, 'b', 1_000, both, at + MINUTE)).refusedBy).toBe(null);
    const minuteTtl = await redis.pttl(tokenWindowKey(prefix, key, 'minute', tokenWindowOf('minute', at)));
    // 45 s of the minute were left at 10:30:15, then the slack.
    expect(minuteTtl).toBeGreaterThan(40_000);
    expect(minuteTtl).toBeLessThanOrEqual(45_000 + 60_000);
    const dayTtl = await redis.pttl(tokenWindowKey(prefix, key, 'day', tokenWindowOf('day', at)));
    expect(dayTtl).toBeLessThanOrEqual(13.5 * 3_600_000 + 60_000);
    // A settle after a window has gone does not bring it back.
    await redis.del(tokenWindowKey(prefix, key, 'minute', tokenWindowOf('minute', at)));
    await quotas.settle(key, 'a', at, 0, at + MINUTE);
    expect(await redis.exists(tokenWindowKey(prefix, key, 'minute', tokenWindowOf('minute', at)))).toBe(0);
  });

  it('never lets requests reserving together, from many clients, overshoot a window', async () => {
    const clients = Array.from({ length: 6 }, () => apiRedis(config));
    try {
      const repos = clients.map((c) => new TokenQuotaRepository(config, c));
      await Promise.all(repos.map((r) => untilConnected(() => r.settle('none', 'none', at, 0, at))));
      const limits = { perMinute: 1_000, perDay: null };
      const results = await Promise.all(
        Array.from({ length: 120 }, (_, i) => repos[i % repos.length]!.reserve(key, `r${i}`, 30 + (i % 7), limits, at)),
      );
      const reserved = results.flatMap((r, i) => (r.refusedBy === null ? [30 + (i % 7)] : []));
      const total = reserved.reduce((a, b) => a + b, 0);
      expect(total).toBeLessThanOrEqual(1_000);
      // Refused only once what is left is less than the smallest request.
      expect(total).toBeGreaterThan(1_000 - 36);
      expect(await counted('minute')).toBe(total);
      for (const r of results) expect(r.used.minute).toBeLessThanOrEqual(1_000);
    } finally {
      await Promise.all(clients.map((c) => c.onApplicationShutdown()));
    }
  });

  it("reserves a batch against the day once, settles its lines' shares, and releases the rest when it ends", async () => {
    expect(await quotas.reserveBatch(key, 'batch_1', 900, 3, 1_000, at)).toEqual({ reserved: true, dayUsed: 900 });
    // A replica that starts the batch again does not reserve it twice.
    expect(await quotas.reserveBatch(key, 'batch_1', 900, 3, 1_000, at)).toEqual({ reserved: true, dayUsed: 900 });
    expect(await quotas.reserveBatch(key, 'batch_2', 200, 1, 1_000, at)).toEqual({ reserved: false, dayUsed: 900 });
    // The minute is not touched by a batch.
    expect(await counted('minute')).toBe(0);
    // One line of three ends, having used 100 of its 300.
    await quotas.settleBatch(key, 'batch_1', at, { lines: 1, used: 100, ended: false }, at + 1_000);
    expect(await counted('day')).toBe(600 + 100);
    expect(await redis.hgetall(batchTokenHoldKey(prefix, key, 'batch_1'))).toEqual({ tokens: '600', lines: '2' });
    // The batch is cancelled: the two lines that never ran give their tokens back.
    await quotas.settleBatch(key, 'batch_1', at, { lines: 0, used: 0, ended: true }, at + 2_000);
    expect(await counted('day')).toBe(100);
    expect(await redis.exists(batchTokenHoldKey(prefix, key, 'batch_1'))).toBe(0);
  });

  it("releases a batch's whole hold with its last lines, whatever the rounding of the shares", async () => {
    await quotas.reserveBatch(key, 'batch_3', 1_000, 3, 5_000, at);
    await quotas.settleBatch(key, 'batch_3', at, { lines: 1, used: 10, ended: false }, at);
    await quotas.settleBatch(key, 'batch_3', at, { lines: 1, used: 10, ended: false }, at);
    await quotas.settleBatch(key, 'batch_3', at, { lines: 1, used: 10, ended: false }, at);
    expect(await counted('day')).toBe(30);
    expect(await redis.exists(batchTokenHoldKey(prefix, key, 'batch_3'))).toBe(0);
  });
});
