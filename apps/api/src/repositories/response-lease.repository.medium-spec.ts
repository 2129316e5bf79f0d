import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformConfig } from '@conveyor/config';
import { responseLeaseKey } from '@conveyor/queue';
import { apiRedis } from './api-redis.js';
import { ResponseLeaseRepository } from './response-lease.repository.js';
import { EVENTUALLY_MS, waitFor } from '../../../../test/support/jobs.js';
import type { CommandConnection } from '@conveyor/redis';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Resolves once the repository answers (its connection refuses commands while it connects). */
async function connected(leases: ResponseLeaseRepository): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return await leases.release('probe', 'nobody');
    } catch (err) {
      if (i > 100) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

describe('ResponseLeaseRepository against real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  const config = { redis: { url, prefix } } as PlatformConfig;
  let redis: Redis;
  /** Two replicas' repositories: the one following a response, and one that may take it over. */
  let first: ResponseLeaseRepository;
  let second: ResponseLeaseRepository;
  const connections: CommandConnection[] = [];

  beforeAll(async () => {
    redis = new Redis(url);
    connections.push(apiRedis(config), apiRedis(config));
    first = new ResponseLeaseRepository(config, connections[0]!);
    second = new ResponseLeaseRepository(config, connections[1]!);
    await connected(first);
    await connected(second);
  });

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await Promise.all(connections.map((c) => c.onApplicationShutdown()));
  });

  it('gives a lease to one holder at a time, with its TTL, until it lapses', async () => {
    // Two seconds: long enough that a loaded machine does not see it lapse between these commands.
    expect(await first.take('resp_a', 'replica-1', 2_000)).toBe(true);
    expect(await redis.get(responseLeaseKey(prefix, 'resp_a'))).toBe('replica-1');
    const ttl = await redis.pttl(responseLeaseKey(prefix, 'resp_a'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(2_000);
    expect(await second.take('resp_a', 'replica-2', 2_000)).toBe(false);
    expect(await first.take('resp_a', 'replica-1', 2_000)).toBe(false);
    await waitFor(
      async () => ((await redis.exists(responseLeaseKey(prefix, 'resp_a'))) === 0 ? true : undefined),
      EVENTUALLY_MS,
      'the lease to lapse',
    );
    expect(await second.take('resp_a', 'replica-2', 10_000)).toBe(true);
    expect(await redis.get(responseLeaseKey(prefix, 'resp_a'))).toBe('replica-2');
  });

  it('among many takers at once, exactly one wins', async () => {
    const wins = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? first : second).take('resp_race', `replica-${i}`, 10_000)),
    );
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('renews only the leases the holder still holds, and names the ones it lost', async () => {
    // Held for seconds, renewed for a minute: a loaded machine neither sees them lapse nor the renewal's TTL
    // run down before it is read.
    await first.take('resp_b', 'replica-1', 5_000);
    await first.take('resp_c', 'replica-1', 5_000);
    await second.take('resp_d', 'replica-2', 10_000);
    expect(await first.renew(['resp_b', 'resp_c', 'resp_d', 'resp_none'], 'replica-1', 60_000)).toEqual([
      'resp_d',
      'resp_none',
    ]);
    expect(await redis.pttl(responseLeaseKey(prefix, 'resp_b'))).toBeGreaterThan(30_000);
    // Renewing did not give it the lease it lost, nor create one.
    expect(await redis.get(responseLeaseKey(prefix, 'resp_d'))).toBe('replica-2');
    expect(await redis.exists(responseLeaseKey(prefix, 'resp_none'))).toBe(0);
    expect(await first.renew([], 'replica-1', 5_000)).toEqual([]);
  });

  it('releases only its own lease, and a released lease can be taken at once', async () => {
    await first.take('resp_e', 'replica-1', 10_000);
    await second.release('resp_e', 'replica-2');
    expect(await redis.get(responseLeaseKey(prefix, 'resp_e'))).toBe('replica-1');
    await first.release('resp_e', 'replica-1');
    expect(await redis.exists(responseLeaseKey(prefix, 'resp_e'))).toBe(0);
    expect(await second.take('resp_e', 'replica-2', 10_000)).toBe(true);
  });
});
