import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { PlatformConfig } from '@conveyor/config';
import {
  BATCH_LINE_PRIORITY,
  activeBatchesKey,
  affinityQueueName,
  batchUnqueuedKey,
  bullPriorityOf,
  deploymentQueueName,
  routeQueuesKey,
} from '@conveyor/queue';
import { untilConnected } from '../../../../test/support/connected.js';
import { apiRedis } from './api-redis.js';
import { PendingWorkRepository } from './pending-work.repository.js';
import type { CommandConnection } from '@conveyor/redis';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('PendingWorkRepository against real Redis and BullMQ', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  // Only the Redis settings are read by the repository.
  const config = { redis: { url, prefix } } as PlatformConfig;
  const opened: Array<Queue | Worker> = [];
  let redis: Redis;
  let work: PendingWorkRepository;
  let connection: CommandConnection;
  const queue = (name: string) => {
    const q = new Queue(name, { connection: { url }, prefix });
    opened.push(q);
    return q;
  };

  beforeAll(async () => {
    redis = new Redis(url);
    connection = apiRedis(config);
    work = new PendingWorkRepository(config, connection);
    await untilConnected(() => work.of([]));
  });
  afterAll(async () => {
    await Promise.all(opened.map((o) => o.close()));
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await connection.onApplicationShutdown();
    redis.disconnect();
  });

  it('counts nothing for a deployment nobody used', async () => {
    expect(await work.of(['idle'])).toEqual(
      new Map([
        [
          'idle',
          {
            waiting: 0,
            batchQueued: 0,
            routed: 0,
            running: 0,
            batchUnqueued: 0,
            waitingByTier: { priority: 0, default: 0, flex: 0, batch: 0 },
          },
        ],
      ]),
    );
  });

  it("counts every kind of a deployment's work where it is, and no other deployment's", async () => {
    const shared = queue(deploymentQueueName('d1'));
    // Requests wait in their service tier's band (`priority` without a BullMQ priority, the others with
    // one), batch lines behind them all; a retry waits delayed.
    await shared.add('generate', {}, { jobId: 'i1' });
    await shared.add('generate', {}, { jobId: 'i2' });
    await shared.add('generate', {}, { jobId: 'default', priority: bullPriorityOf({ tier: 'default' }) });
    await shared.add('generate', {}, { jobId: 'flex', priority: bullPriorityOf({ tier: 'flex' }) });
    await shared.add('generate', {}, { jobId: 'retry', delay: 60_000 });
    for (const line of [1, 2, 3])
      await shared.add('generate', {}, { jobId: `l${line}`, priority: BATCH_LINE_PRIORITY });
    // Routed jobs wait in the queue of the worker holding their prompt, a batch line among them.
    await redis.sadd(routeQueuesKey(prefix, 'd1'), 'w1', 'w2');
    await queue(affinityQueueName('d1', 'w1')).add('generate', {}, { jobId: 'r1', priority: 1 });
    await queue(affinityQueueName('d1', 'w2')).add('generate', {}, { jobId: 'r2', priority: BATCH_LINE_PRIORITY });
    // A worker takes one interactive job: it runs, and is counted once, as running.
    const worker = new Worker(deploymentQueueName('d1'), null, { connection: { url }, prefix });
    opened.push(worker);
    expect((await worker.getNextJob('token'))?.id).toBe('i1');
    // A running batch's lines still in its input file; a batch that ended left its count behind.
    await redis.sadd(activeBatchesKey(prefix), 'batch_a');
    await redis.hset(batchUnqueuedKey(prefix, 'd1'), 'batch_a', 95, 'batch_a:through', 5, 'batch_gone', 40);
    // Another deployment's work is its own.
    await queue(deploymentQueueName('d2')).add('generate', {}, { jobId: 'other' });

    const counts = await work.of(['d1', 'd2']);
    // By band, the deployment's own queue only: the retry waiting out its back-off is in `waiting` alone.
    expect(counts.get('d1')).toEqual({
      waiting: 4,
      batchQueued: 3,
      routed: 2,
      running: 1,
      batchUnqueued: 95,
      waitingByTier: { priority: 1, default: 1, flex: 1, batch: 3 },
    });
    expect(counts.get('d2')).toMatchObject({ waiting: 1, batchQueued: 0, routed: 0, running: 0, batchUnqueued: 0 });
    expect(counts.get('d2')!.waitingByTier).toEqual({ priority: 1, default: 0, flex: 0, batch: 0 });
  });
});
