import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { liveWorkersKey, workerBeatsKey } from '@conveyor/queue';
import { Heartbeat } from './heartbeat.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('Heartbeat with real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  const redis = new Redis(url);

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it("announces the worker and beats for each deployment, lapsing three beats on in Redis's clock; a shutdown withdraws the announcement first and the heartbeat last", async () => {
    const heartbeat = new Heartbeat(redis, {
      prefix,
      workerId: 'host:1',
      instance: 'host_1~abc',
      deployments: ['a', 'b'],
      heartbeatMs: 1000,
    });
    await heartbeat.beat();
    const [seconds, micros] = await redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    for (const d of ['a', 'b']) {
      expect(await redis.zrange(liveWorkersKey(prefix, d), '0', '-1')).toEqual(['host:1']);
      const lapses = Number(await redis.zscore(workerBeatsKey(prefix, d), 'host_1~abc'));
      expect(lapses).toBeGreaterThan(now + 2500);
      expect(lapses).toBeLessThanOrEqual(now + 3000);
    }

    await heartbeat.withdraw();
    await heartbeat.beat();
    expect(await redis.exists(liveWorkersKey(prefix, 'a'))).toBe(0);
    expect(await redis.zrange(workerBeatsKey(prefix, 'a'), '0', '-1')).toEqual(['host_1~abc']);

    await heartbeat.leave();
    expect(await redis.exists(workerBeatsKey(prefix, 'a'), workerBeatsKey(prefix, 'b'))).toBe(0);
  });
});
