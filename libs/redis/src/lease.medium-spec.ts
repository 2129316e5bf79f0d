import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { untilConnected } from '../../../test/support/connected.js';
import { Leases, LEASE_SCRIPTS } from './lease.js';
import { defineScripts } from './lua-scripts.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Resolves once the key has expired: a lease let lapse, however slow the machine. */
async function lapsed(redis: Redis, key: string): Promise<void> {
  while ((await redis.exists(key)) === 1) await new Promise((r) => setTimeout(r, 10));
}

describe('Leases against real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  const key = (name: string) => `${prefix}:lease:${name}`;
  let redis: Redis;
  /** Two processes' connections, each with the scripts defined as a process defines them. */
  let first: Leases;
  let second: Leases;
  const clients: Redis[] = [];

  beforeAll(async () => {
    redis = new Redis(url);
    for (let i = 0; i < 2; i++) {
      const client = new Redis(url);
      defineScripts(client, LEASE_SCRIPTS);
      clients.push(client);
    }
    first = new Leases(clients[0]!);
    second = new Leases(clients[1]!);
    await untilConnected(() => Promise.all([redis, ...clients].map((c) => c.ping())));
  });

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    for (const client of [redis, ...clients]) client.disconnect();
  });

  it('gives a lease to one holder at a time, with its TTL', async () => {
    expect(await first.acquire(key('a'), 'one', 10_000)).toBe(true);
    expect(await redis.get(key('a'))).toBe('one');
    expect(await redis.pttl(key('a'))).toBeGreaterThan(5_000);
    expect(await second.acquire(key('a'), 'two', 10_000)).toBe(false);
    expect(await first.acquire(key('a'), 'one', 10_000)).toBe(false);
    expect(await first.holds(key('a'), 'one')).toBe(true);
    expect(await second.holds(key('a'), 'two')).toBe(false);
  });

  it('among many takers at once, exactly one wins', async () => {
    const wins = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? first : second).acquire(key('race'), `holder-${i}`, 10_000)),
    );
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('renews a lease its holder still holds, and not one held by nobody', async () => {
    await first.acquire(key('b'), 'one', 2_000);
    expect(await first.renew(key('b'), 'one', 60_000)).toBe(true);
    expect(await redis.pttl(key('b'))).toBeGreaterThan(30_000);
    expect(await first.renew(key('none'), 'one', 60_000)).toBe(false);
    expect(await redis.exists(key('none'))).toBe(0);
  });

  it('refuses a renewal after the lease lapsed and another took it, leaving the new holder’s lease as it was', async () => {
    await first.acquire(key('c'), 'one', 50);
    await lapsed(redis, key('c'));
    expect(await second.acquire(key('c'), 'two', 5_000)).toBe(true);
    expect(await first.renew(key('c'), 'one', 60_000)).toBe(false);
    expect(await first.hold(key('c'), 'one', 60_000)).toBe(false);
    expect(await redis.get(key('c'))).toBe('two');
    expect(await redis.pttl(key('c'))).toBeLessThanOrEqual(5_000);
  });

  it('refuses a renewal after the lease lapsed with nobody taking it, and creates no lease', async () => {
    await first.acquire(key('d'), 'one', 50);
    await lapsed(redis, key('d'));
    expect(await first.renew(key('d'), 'one', 60_000)).toBe(false);
    expect(await redis.exists(key('d'))).toBe(0);
  });

  it('ignores a release by a holder that does not hold the lease; its holder’s release frees it at once', async () => {
    await first.acquire(key('e'), 'one', 60_000);
    expect(await second.release(key('e'), 'two')).toBe(false);
    expect(await redis.get(key('e'))).toBe('one');
    expect(await redis.pttl(key('e'))).toBeGreaterThan(30_000);
    expect(await first.release(key('e'), 'one')).toBe(true);
    expect(await redis.exists(key('e'))).toBe(0);
    expect(await first.release(key('e'), 'one')).toBe(false);
    expect(await second.acquire(key('e'), 'two', 60_000)).toBe(true);
  });

  it('holds: takes a free lease, renews its own, and yields to another holder', async () => {
    expect(await first.hold(key('f'), 'one', 2_000)).toBe(true);
    expect(await first.hold(key('f'), 'one', 60_000)).toBe(true);
    expect(await redis.pttl(key('f'))).toBeGreaterThan(30_000);
    expect(await second.hold(key('f'), 'two', 60_000)).toBe(false);
    expect(await redis.get(key('f'))).toBe('one');
  });
});
