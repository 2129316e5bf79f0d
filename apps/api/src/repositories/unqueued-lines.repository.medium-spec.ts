import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformConfig } from '@conveyor/config';
import { batchUnqueuedKey } from '@conveyor/queue';
import { untilConnected } from '../../../../test/support/connected.js';
import { apiRedis } from './api-redis.js';
import { UnqueuedLinesRepository } from './unqueued-lines.repository.js';
import type { CommandConnection } from '@conveyor/redis';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('UnqueuedLinesRepository against real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  // Only the Redis settings are read by the repository.
  const config = { redis: { url, prefix } } as PlatformConfig;
  let redis: Redis;
  let unqueued: UnqueuedLinesRepository;
  let connection: CommandConnection;
  const left = async (deployment: string, batchId: string) =>
    redis.hget(batchUnqueuedKey(prefix, deployment), batchId).then((v) => (v === null ? null : Number(v)));

  beforeAll(async () => {
    redis = new Redis(url);
    connection = apiRedis(config);
    unqueued = new UnqueuedLinesRepository(config, connection);
    await untilConnected(() => unqueued.forget('none', ['none']));
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await connection.onApplicationShutdown();
    redis.disconnect();
  });

  it('counts each deployment of a batch apart, and a line once however often it is queued', async () => {
    await unqueued.expect(
      'b1',
      new Map([
        ['a', 3],
        ['b', 2],
      ]),
    );
    expect([await left('a', 'b1'), await left('b', 'b1')]).toEqual([3, 2]);
    await unqueued.queued('b1', 'a', [1]);
    await unqueued.queued('b1', 'b', [2]);
    // Fed again after a failure, or recovered: at or before the last line counted, so not counted.
    await unqueued.queued('b1', 'a', [1]);
    await unqueued.queued('b1', 'b', [2]);
    await unqueued.queued('b1', 'a', [3]);
    expect([await left('a', 'b1'), await left('b', 'b1')]).toEqual([1, 1]);
  });

  it("counts a tick's lines in one call, those past the last counted only", async () => {
    await unqueued.expect('b4', new Map([['a', 10]]));
    await unqueued.queued('b4', 'a', [1, 2, 3]);
    expect(await left('a', 'b4')).toBe(7);
    // Fed again from line 2 after a failure, then on: only 4 and 5 are new.
    await unqueued.queued('b4', 'a', [2, 3, 4, 5]);
    expect(await left('a', 'b4')).toBe(5);
    await unqueued.queued('b4', 'a', []);
    expect(await left('a', 'b4')).toBe(5);
  });

  it('never goes below zero, and counts nothing for a batch it does not know or has forgotten', async () => {
    await unqueued.expect('b2', new Map([['a', 1]]));
    await unqueued.queued('b2', 'a', [1]);
    await unqueued.queued('b2', 'a', [2]);
    expect(await left('a', 'b2')).toBe(0);
    await unqueued.queued('unknown', 'a', [5]);
    expect(await redis.hexists(batchUnqueuedKey(prefix, 'a'), 'unknown')).toBe(0);
    await unqueued.forget('b2', ['a', 'b']);
    await unqueued.queued('b2', 'a', [9]);
    expect(await redis.hgetall(batchUnqueuedKey(prefix, 'a'))).not.toHaveProperty('b2');
    expect(await redis.hgetall(batchUnqueuedKey(prefix, 'a'))).not.toHaveProperty('b2:through');
  });

  it('a batch validated again (its replica stopped before starting it) starts its counts over', async () => {
    await unqueued.expect('b3', new Map([['a', 4]]));
    await unqueued.queued('b3', 'a', [1]);
    await unqueued.expect('b3', new Map([['a', 4]]));
    await unqueued.queued('b3', 'a', [1]);
    expect(await left('a', 'b3')).toBe(3);
  });
});
