import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformConfig } from '@conveyor/config';
import { IMAGE_SCRIPTS, imageJobsKey, imageKey } from '@conveyor/queue';
import { loadScript, type CommandConnection } from '@conveyor/redis';
import { workerRedis } from '../worker-redis.js';
import { RedisImageReleaser } from './redis-image.releaser.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('RedisImageReleaser against real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  let redis: Redis;
  let releaser: RedisImageReleaser;
  let connection: CommandConnection;

  beforeAll(() => {
    redis = new Redis(url);
    // Only the Redis settings are read by the releaser.
    const config = { redis: { url, prefix } } as PlatformConfig;
    connection = workerRedis(config);
    releaser = new RedisImageReleaser(config, connection);
  });

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await connection.onApplicationShutdown();
  });

  /** What the API does before queueing a job: the same script its store runs. */
  const hold = (sha: string, jobId: string) =>
    redis.eval(
      loadScript(IMAGE_SCRIPTS.hold).lua,
      2,
      imageKey(prefix, sha),
      imageJobsKey(prefix, sha),
      jobId,
      60_000,
      randomBytes(16),
    );

  it("releases a finished job's images: each goes with the last job that refers to it", async () => {
    const [shared, own] = ['a'.repeat(64), 'b'.repeat(64)];
    await hold(shared, 'job-1');
    await hold(shared, 'job-2');
    await hold(own, 'job-1');
    await releaser.release('job-1', [shared, own]);
    expect(await redis.exists(imageKey(prefix, own), imageJobsKey(prefix, own))).toBe(0);
    expect(await redis.exists(imageKey(prefix, shared))).toBe(1);
    expect(await redis.smembers(imageJobsKey(prefix, shared))).toEqual(['job-2']);
    await releaser.release('job-2', [shared]);
    expect(await redis.exists(imageKey(prefix, shared), imageJobsKey(prefix, shared))).toBe(0);
  });
});
