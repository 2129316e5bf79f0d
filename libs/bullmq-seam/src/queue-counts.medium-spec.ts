import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { countByPriority, countSplitAtPriority } from './queue-counts.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const connection = { host: new URL(url).hostname, port: Number(new URL(url).port || 6379) };

/** The counts read BullMQ's own keys, so they are checked against jobs real BullMQ queued. */
describe('queue counts by priority, against real BullMQ', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  const redis = new Redis(url);
  const queue = new Queue('counts', { connection, prefix });

  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('counts the plain waiting, each band of priorities, the delayed and none running', async () => {
    const add = (n: number, priority: number, delay = 0) =>
      queue.addBulk(
        Array.from({ length: n }, (_, i) => ({
          name: 'job',
          data: {},
          opts: { ...(priority ? { priority } : {}), ...(delay ? { delay } : {}), jobId: `${priority}-${delay}-${i}` },
        })),
      );
    await add(2, 0);
    await add(3, 1);
    await add(4, 2);
    await add(1, 999);
    await add(5, 1000);
    await add(6, 2_000_000);
    await add(1, 1, 60_000);
    expect(await countByPriority(redis, prefix, 'counts', [2, 1000])).toEqual({
      wait: 2,
      bands: [3, 5, 11],
      delayed: 1,
      active: 0,
    });
    expect(await countByPriority(redis, prefix, 'counts', [])).toMatchObject({ bands: [19] });
    expect(await countSplitAtPriority(redis, prefix, 'counts', 1000)).toEqual({
      wait: 2,
      before: 8,
      from: 11,
      delayed: 1,
      active: 0,
    });
  });
});
