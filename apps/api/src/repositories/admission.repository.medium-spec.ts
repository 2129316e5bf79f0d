import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformConfig } from '@conveyor/config';
import { bullQueueKey } from '@conveyor/bullmq-seam';
import { admissionKey, affinityQueueName, deploymentQueueName, routeQueuesKey } from '@conveyor/queue';
import { untilConnected } from '../../../../test/support/connected.js';
import { AdmissionRepository } from './admission.repository.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('AdmissionRepository against real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  // Only the Redis settings are read by the repository.
  const config = { redis: { url, prefix } } as PlatformConfig;
  let redis: Redis;
  let admission: AdmissionRepository;
  let deployment: string;
  /** What enqueueing does to the wait list: BullMQ pushes a new job's id at the head. */
  const enqueue = (id: string) => redis.lpush(bullQueueKey(prefix, deploymentQueueName(deployment), 'wait'), id);

  beforeAll(async () => {
    redis = new Redis(url);
    admission = new AdmissionRepository(config);
    await untilConnected(() => admission.release('none', 'none'));
  });
  beforeEach(() => {
    deployment = `d-${randomBytes(4).toString('hex')}`;
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    admission.onApplicationShutdown();
    redis.disconnect();
  });

  it('counts jobs waiting and places reserved, and refuses at the limit', async () => {
    await enqueue('waiting-1');
    expect(await admission.reserve(deployment, 'a', 3)).toEqual({ admitted: true });
    expect(await admission.reserve(deployment, 'b', 3)).toEqual({ admitted: true });
    expect(await admission.reserve(deployment, 'c', 3)).toEqual({ admitted: false, queued: 3 });
    await admission.release(deployment, 'b');
    expect(await admission.reserve(deployment, 'c', 3)).toEqual({ admitted: true });
  });

  it('counts a job once between its entering the wait list and its reservation being released', async () => {
    // Request a is admitted and queued; its replica has not released the reservation yet.
    expect(await admission.reserve(deployment, 'a', 2)).toEqual({ admitted: true });
    await enqueue('a');
    // b sees one request waiting, not two.
    expect(await admission.reserve(deployment, 'b', 2)).toEqual({ admitted: true });
    await enqueue('b');
    expect(await admission.reserve(deployment, 'c', 2)).toEqual({ admitted: false, queued: 2 });
  });

  it('finds a queued reservation behind jobs pushed after it', async () => {
    expect(await admission.reserve(deployment, 'a', 100)).toEqual({ admitted: true });
    await enqueue('a');
    for (let i = 0; i < 40; i++) await enqueue(`later-${i}`);
    expect(await admission.reserve(deployment, 'b', 100)).toEqual({ admitted: true });
    // 41 waiting and b's place: a is not counted a second time.
    expect(await admission.reserve(deployment, 'c', 43)).toEqual({ admitted: true });
    expect(await admission.reserve(deployment, 'd', 43)).toEqual({ admitted: false, queued: 43 });
  });

  it('counts the jobs waiting in the queues of the workers routing sends jobs to', async () => {
    const routed = (worker: string, id: string) =>
      redis.lpush(bullQueueKey(prefix, affinityQueueName(deployment, worker), 'wait'), id);
    await redis.sadd(routeQueuesKey(prefix, deployment), 'w1', 'w2');
    await enqueue('shared-1');
    await routed('w1', 'routed-1');
    await routed('w2', 'routed-2');
    expect(await admission.reserve(deployment, 'a', 4)).toEqual({ admitted: true });
    expect(await admission.reserve(deployment, 'b', 4)).toEqual({ admitted: false, queued: 4 });
  });

  it("counts a routed job once between its entering a worker's queue and its reservation being released", async () => {
    await redis.sadd(routeQueuesKey(prefix, deployment), 'w1');
    expect(await admission.reserve(deployment, 'a', 2)).toEqual({ admitted: true });
    await redis.lpush(bullQueueKey(prefix, affinityQueueName(deployment, 'w1'), 'wait'), 'a');
    expect(await admission.reserve(deployment, 'b', 2)).toEqual({ admitted: true });
    expect(await admission.reserve(deployment, 'c', 2)).toEqual({ admitted: false, queued: 2 });
  });

  it('lets a reservation of a replica that died lapse', async () => {
    await redis.zadd(admissionKey(prefix, deployment), Date.now() - 1, 'from-a-dead-replica');
    expect(await admission.reserve(deployment, 'a', 1)).toEqual({ admitted: true });
  });
});
