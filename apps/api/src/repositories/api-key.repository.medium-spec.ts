import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { loadConfig, type PlatformConfig } from '@conveyor/config';
import { apiKeyIndexKey, apiKeysInUseKey } from '@conveyor/queue';
import type { CommandConnection } from '@conveyor/redis';
import { untilConnected } from '../../../../test/support/connected.js';
import { REDIS_URL, deleteKeys } from '../../../../test/support/platform.js';
import { ApiKeyRepository } from './api-key.repository.js';
import { apiRedis } from './api-redis.js';
import type { StoredApiKey } from './api-keys.port.js';

const digest = (key: string) => createHash('sha256').update(key).digest('hex');

describe('ApiKeyRepository (real Redis)', () => {
  let config: PlatformConfig;
  let keys: ApiKeyRepository;
  let connection: CommandConnection;
  let redis: Redis;

  beforeAll(async () => {
    const base = loadConfig({});
    config = { ...base, redis: { ...base.redis, prefix: `test-apikeys-${randomBytes(6).toString('hex')}` } };
    connection = apiRedis(config);
    keys = new ApiKeyRepository(config, connection);
    redis = new Redis(REDIS_URL);
    await untilConnected(() => keys.inUse());
  });

  afterAll(async () => {
    await connection.onApplicationShutdown();
    redis.disconnect();
    await deleteKeys(config.redis.prefix);
  });

  const key = (name: string, secret = `sk-${name}-${randomBytes(4).toString('hex')}`): StoredApiKey => ({
    name,
    sha256: digest(secret),
    hint: secret.slice(-4),
    createdAt: 1_800_000_000_000,
    settings: {
      rateLimit: { requests: 5, perSeconds: 60 },
      tokenLimit: { perDay: 1000 },
      tiers: ['default', 'priority'],
      weight: 2.5,
      deadlineMs: 30_000,
      webhook: { url: 'http://127.0.0.1:9/hook', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
    },
  });

  it('stores a key by its digest only, finds it by digest and by name, and refuses a second of the same name', async () => {
    const teamA = key('team-a');
    expect(await keys.inUse()).toBe(false);
    expect(await keys.create(teamA)).toBe(true);
    expect(await keys.inUse()).toBe(true);
    expect(await keys.create(key('team-a'))).toBe(false);
    expect(await keys.find(teamA.sha256)).toEqual(teamA);
    expect(await keys.findByName('team-a')).toEqual(teamA);
    expect(await keys.find(digest('never-made'))).toBeNull();
    expect(await keys.findByName('nobody')).toBeNull();
    // Nothing under the prefix holds anything but digests: no key text is kept.
    const names = await redis.keys(`${config.redis.prefix}:*`);
    expect(names.sort()).toEqual(
      [
        apiKeyIndexKey(config.redis.prefix),
        `${apiKeyIndexKey(config.redis.prefix)}:${teamA.sha256}`,
        apiKeysInUseKey(config.redis.prefix),
      ].sort(),
    );
  });

  it('keeps a key with no settings as one with none', async () => {
    const bare = { ...key('bare'), settings: {} };
    expect(await keys.create(bare)).toBe(true);
    expect(await keys.find(bare.sha256)).toEqual(bare);
  });

  it('changes only the settings named, removes those given as null, and not a key that is gone', async () => {
    const teamB = key('team-b');
    await keys.create(teamB);
    const changed = await keys.update('team-b', { weight: 4, rateLimit: null, tiers: ['flex'] });
    const { rateLimit: _removed, ...kept } = teamB.settings;
    expect(changed).toEqual({ ...teamB, settings: { ...kept, weight: 4, tiers: ['flex'] } });
    expect(await keys.find(teamB.sha256)).toEqual(changed);
    expect(await keys.update('nobody', { weight: 1 })).toBeNull();
  });

  it('rotates a key: a new digest and hint, the same name, settings and creation time, the old digest gone', async () => {
    const teamC = key('team-c');
    await keys.create(teamC);
    const next = digest('sk-team-c-next');
    const rotated = await keys.rotate('team-c', next, 'next');
    expect(rotated).toEqual({ ...teamC, sha256: next, hint: 'next' });
    expect(await keys.find(teamC.sha256)).toBeNull();
    expect(await keys.findByName('team-c')).toEqual(rotated);
    expect(await keys.rotate('nobody', digest('x'), 'x')).toBeNull();
  });

  it('revokes a key: found neither by digest nor by name, and its name never given again', async () => {
    const teamD = key('team-d');
    await keys.create(teamD);
    expect(await keys.revoke('team-d')).toEqual(teamD);
    expect(await keys.find(teamD.sha256)).toBeNull();
    expect(await keys.findByName('team-d')).toBeNull();
    expect(await keys.revoke('team-d')).toBeNull();
    // A new key of its name would own its files and batches.
    expect(await keys.create(key('team-d'))).toBe(false);
    expect(await keys.findByName('team-d')).toBeNull();
  });

  it('lists every key by name', async () => {
    const listed = await keys.list();
    expect(listed.map((k) => k.name)).toEqual(['bare', 'team-a', 'team-b', 'team-c']);
  });

  it('stays in use once every key is revoked', async () => {
    for (const { name } of await keys.list()) expect(await keys.revoke(name)).not.toBeNull();
    expect(await keys.list()).toEqual([]);
    expect(await keys.inUse()).toBe(true);
  });

  it('creates one key of a name however many replicas try at once', async () => {
    const tries = Array.from({ length: 8 }, () => key('raced'));
    const made = await Promise.all(tries.map((k) => keys.create(k)));
    expect(made.filter(Boolean)).toHaveLength(1);
    const winner = tries[made.indexOf(true)]!;
    expect(await keys.findByName('raced')).toEqual(winner);
    for (const loser of tries.filter((k) => k !== winner)) expect(await keys.find(loser.sha256)).toBeNull();
  });
});
