import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { CommandConnection } from '@conveyor/redis';
import { untilConnected } from '../../../../test/support/connected.js';
import { RedisServerStatsRepository } from './redis-server-stats.repository.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('RedisServerStatsRepository against real Redis', () => {
  let redis: Redis;
  let stats: RedisServerStatsRepository;

  beforeAll(async () => {
    redis = new Redis(url);
    await untilConnected(() => redis.ping());
    stats = new RedisServerStatsRepository(new CommandConnection(redis, []));
  });

  afterAll(() => redis?.disconnect());

  it("reads the server's own count of the commands it processed, which every command sent raises", async () => {
    const before = await stats.commandsProcessed();
    expect(before).toBeGreaterThan(0);
    const key = `stats-test:${randomBytes(6).toString('hex')}`;
    for (let i = 0; i < 50; i++) await redis.incr(key);
    await redis.del(key);
    // Other clients of the shared server may add to it meanwhile, never take away.
    expect((await stats.commandsProcessed()) - before).toBeGreaterThanOrEqual(51);
  });
});
