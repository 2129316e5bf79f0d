import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformConfig } from '@conveyor/config';
import { ADMISSION_RESERVATION_MS, admissionKey } from '@conveyor/queue';
import { untilConnected } from '../../../../test/support/connected.js';
import type { CommandConnection } from '@conveyor/redis';
import { apiRedis } from './api-redis.js';
import { AdmissionRepository } from './admission.repository.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('AdmissionRepository against real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  const QUEUE_TIMEOUT_MS = 60_000;
  // Only the Redis settings and the queue timeout are read by the repository.
  const config = { redis: { url, prefix }, api: { queueTimeoutMs: QUEUE_TIMEOUT_MS } } as PlatformConfig;
  let redis: Redis;
  let admission: AdmissionRepository;
  let connection: CommandConnection;
  let deployment: string;
  /** What a worker does as it takes a request's job (apps/worker's RedisAdmissionPlaces). */
  const take = (id: string) => redis.zrem(admissionKey(prefix, deployment), id);

  beforeAll(async () => {
    redis = new Redis(url);
    connection = apiRedis(config);
    admission = new AdmissionRepository(config, connection);
    await untilConnected(() => admission.release('none', 'none'));
  });
  beforeEach(() => {
    deployment = `d-${randomBytes(4).toString('hex')}`;
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await connection.onApplicationShutdown();
    redis.disconnect();
  });

  it('holds a place from admission until a worker takes the job, and refuses at the limit', async () => {
    expect(await admission.reserve(deployment, 'a', 2)).toEqual({ admitted: true });
    expect(await admission.reserve(deployment, 'b', 2)).toEqual({ admitted: true });
    await admission.queued(deployment, 'a');
    await admission.queued(deployment, 'b');
    expect(await admission.reserve(deployment, 'c', 2)).toEqual({ admitted: false, queued: 2 });
    await take('a');
    expect(await admission.reserve(deployment, 'c', 2)).toEqual({ admitted: true });
  });

  it('holds a queued place past the reservation, until the API would take the job back', async () => {
    const before = Date.now();
    await admission.reserve(deployment, 'a', 10);
    const reserved = Number(await redis.zscore(admissionKey(prefix, deployment), 'a'));
    expect(reserved).toBeGreaterThanOrEqual(before + ADMISSION_RESERVATION_MS);
    await admission.queued(deployment, 'a');
    const queued = Number(await redis.zscore(admissionKey(prefix, deployment), 'a'));
    expect(queued).toBeGreaterThanOrEqual(before + QUEUE_TIMEOUT_MS + ADMISSION_RESERVATION_MS);
  });

  it('keeps a place given back by the worker that took the job given back, however late the API marks it queued', async () => {
    await admission.reserve(deployment, 'a', 1);
    await take('a');
    await admission.queued(deployment, 'a');
    expect(await redis.zcard(admissionKey(prefix, deployment))).toBe(0);
    expect(await admission.reserve(deployment, 'b', 1)).toEqual({ admitted: true });
  });

  it('gives a place back for a job never queued, or taken back before a worker had it', async () => {
    await admission.reserve(deployment, 'never-queued', 2);
    await admission.reserve(deployment, 'withdrawn', 2);
    await admission.queued(deployment, 'withdrawn');
    await admission.release(deployment, 'never-queued');
    await admission.release(deployment, 'withdrawn');
    expect(await redis.zcard(admissionKey(prefix, deployment))).toBe(0);
  });

  it('admits exactly the limit of requests that arrive together', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => admission.reserve(deployment, `r${i}`, 5)));
    expect(results.filter((r) => r.admitted)).toHaveLength(5);
    for (const r of results.filter((r) => !r.admitted)) expect(r).toEqual({ admitted: false, queued: 5 });
  });

  it('lets a place left by a process that died lapse', async () => {
    await redis.zadd(admissionKey(prefix, deployment), Date.now() - 1, 'from-a-dead-replica');
    expect(await admission.reserve(deployment, 'a', 1)).toEqual({ admitted: true });
    // Counted out at once, and removed by a request whose id ends in 0 (one uuid in 16).
    expect(await redis.zscore(admissionKey(prefix, deployment), 'from-a-dead-replica')).not.toBeNull();
    expect(await admission.reserve(deployment, 'b0', 3)).toEqual({ admitted: true });
    expect(await redis.zrange(admissionKey(prefix, deployment), '0', '-1')).toEqual(['a', 'b0']);
  });
});
