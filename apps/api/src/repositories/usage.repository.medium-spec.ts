import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { loadConfig, type PlatformConfig } from '@conveyor/config';
import { untilConnected } from '../../../../test/support/connected.js';
import { deleteKeys } from '../../../../test/support/platform.js';
import type { CommandConnection } from '@conveyor/redis';
import { usageBucketKey, usageNewKey, usageNewMinutesKey } from '@conveyor/queue';
import { apiRedis } from './api-redis.js';
import { UsageRepository } from './usage.repository.js';

describe('UsageRepository (real Redis)', () => {
  let config: PlatformConfig;
  let usage: UsageRepository;
  let connection: CommandConnection;

  beforeAll(async () => {
    const base = loadConfig({});
    config = { ...base, redis: { ...base.redis, prefix: `test-usage-${randomBytes(6).toString('hex')}` } };
    connection = apiRedis(config);
    usage = new UsageRepository(config, connection);
    await untilConnected(() => usage.read('1m', [0]));
  });

  afterAll(async () => {
    await connection.onApplicationShutdown();
    await deleteKeys(config.redis.prefix);
  });

  const at = Date.UTC(2030, 0, 2, 10, 30, 15);
  const entry = (key: string, requestId: string = randomUUID(), batch = false) => ({
    requestId,
    at,
    key,
    deployment: 'qwen',
    route: '/v1/chat/completions',
    batch,
    usage: { promptTokens: 10, completionTokens: 4, cachedTokens: 6 },
  });

  it('counts a request once however often its end is read, into its minute, hour and day', async () => {
    const once = entry('team-a');
    expect(await usage.count(once)).toBe(true);
    expect(await usage.count(once)).toBe(false);
    expect(await usage.count(entry('team-a'))).toBe(true);
    expect(await usage.count(entry('team-b', randomUUID(), true))).toBe(true);
    const seconds = Math.floor(at / 1000);
    for (const [width, size] of [
      ['1m', 60],
      ['1h', 3600],
      ['1d', 86_400],
    ] as const) {
      const [groups] = await usage.read(width, [seconds - (seconds % size)]);
      expect(groups).toEqual(
        expect.arrayContaining([
          {
            key: 'team-a',
            deployment: 'qwen',
            route: '/v1/chat/completions',
            batch: false,
            inputTokens: 20,
            outputTokens: 8,
            cachedTokens: 12,
            requests: 2,
          },
          expect.objectContaining({ key: 'team-b', batch: true, requests: 1, inputTokens: 10 }),
        ]),
      );
      expect(groups).toHaveLength(2);
    }
    const [empty] = await usage.read('1m', [seconds - (seconds % 60) + 60]);
    expect(empty).toEqual([]);
  });

  it('keeps counting a minute whose counts are already in its buckets, and leaves no new counts behind', async () => {
    const later = Date.UTC(2030, 0, 3, 23, 59, 30);
    const seconds = Math.floor(later / 1000);
    const day = seconds - (seconds % 86_400);
    const one = () => ({ ...entry('team-c'), at: later });
    const newCounts = () =>
      connection.redis.exists(
        usageNewKey(config.redis.prefix, seconds - (seconds % 60)),
        usageNewMinutesKey(config.redis.prefix, day),
      );
    expect(await usage.count(one())).toBe(true);
    expect(await newCounts()).toBe(2);
    await usage.rollUp(later);
    expect(await newCounts()).toBe(0);
    expect(await usage.count(one())).toBe(true);
    expect(await usage.count(one())).toBe(true);
    for (const [width, start] of [
      ['1m', seconds - (seconds % 60)],
      ['1h', seconds - (seconds % 3600)],
      ['1d', day],
    ] as const) {
      const [groups] = await usage.read(width, [start]);
      expect(groups).toEqual([
        expect.objectContaining({ key: 'team-c', requests: 3, inputTokens: 30, cachedTokens: 18 }),
      ]);
    }
    expect(await newCounts()).toBe(0);
    // Each bucket lapses after its width's time, as a bucket counted into directly did.
    const ttl = await connection.redis.pttl(usageBucketKey(config.redis.prefix, '1d', day));
    expect(ttl).toBeGreaterThan(399 * 86_400_000);
  });

  it('adds new counts an earlier version left as a hash to the buckets, beside the log of this one', async () => {
    const later = Date.UTC(2030, 0, 6, 12, 0, 5);
    const seconds = Math.floor(later / 1000);
    const minute = seconds - (seconds % 60);
    const day = seconds - (seconds % 86_400);
    const group = JSON.stringify(['team-e', 'qwen', '/v1/chat/completions', 0]);
    const earlier = usageNewKey(config.redis.prefix, minute).replace(/log:(\d+)$/, 'new:$1');
    await connection.redis
      .multi()
      .hincrby(earlier, `input ${group}`, 100)
      .hincrby(earlier, `requests ${group}`, 2)
      .sadd(usageNewMinutesKey(config.redis.prefix, day), String(minute))
      .exec();
    expect(await usage.count({ ...entry('team-e'), at: later })).toBe(true);
    const [groups] = await usage.read('1m', [minute]);
    expect(groups).toEqual([
      {
        key: 'team-e',
        deployment: 'qwen',
        route: '/v1/chat/completions',
        batch: false,
        inputTokens: 110,
        outputTokens: 4,
        cachedTokens: 6,
        requests: 3,
      },
    ]);
    expect(await connection.redis.exists(earlier, usageNewKey(config.redis.prefix, minute))).toBe(0);
  });

  it("counts a batch's part of results as the lines it stands for, once", async () => {
    const later = Date.UTC(2030, 0, 5, 8, 0, 0);
    const seconds = Math.floor(later / 1000);
    const part = { ...entry('team-d', 'batch_x:output-0:qwen', true), at: later, requests: 256 };
    expect(await usage.count(part)).toBe(true);
    expect(await usage.count(part)).toBe(false);
    const [groups] = await usage.read('1m', [seconds - (seconds % 60)]);
    expect(groups).toEqual([expect.objectContaining({ key: 'team-d', batch: true, requests: 256, inputTokens: 10 })]);
  });
});
