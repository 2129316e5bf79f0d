import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { loadConfig, type PlatformConfig } from '@conveyor/config';
import { apiKeyIndexKey, apiKeyRecordKey, useHashTags } from '@conveyor/queue';
import type { CommandConnection } from '@conveyor/redis';
import { RedisCluster } from '../../../../test/support/redis-cluster.js';
import { ApiKeyRepository } from './api-key.repository.js';
import { apiRedis } from './api-redis.js';

const digest = (key: string) => createHash('sha256').update(key).digest('hex');

/** Every script of the repository touches several keys: on a cluster they must share a slot, or Redis refuses. */
describe('ApiKeyRepository on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let connection: CommandConnection;
  let keys: ApiKeyRepository;
  let config: PlatformConfig;

  beforeAll(async () => {
    useHashTags(true);
    cluster = await RedisCluster.start();
    config = loadConfig({ REDIS_CLUSTER_NODES: cluster.seeds, REDIS_PREFIX: 'keys-cluster' });
    connection = apiRedis(config);
    keys = new ApiKeyRepository(config, connection);
    // A cluster client refuses commands until it has read the slots (no offline queue), as it does at start-up.
    const end = Date.now() + 60_000;
    for (;;) {
      try {
        await keys.inUse();
        break;
      } catch (err) {
        if (Date.now() > end || !/isn't ready|isn't writeable|Connection is closed/.test((err as Error).message))
          throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }, 120_000);

  afterAll(async () => {
    await connection?.onApplicationShutdown();
    await cluster?.stop();
    useHashTags(false);
  });

  it('names every key of the store with one hash tag', () => {
    expect(apiKeyIndexKey('p')).toBe('p:apikeys:{apikeys}');
    expect(apiKeyRecordKey('p', 'ab')).toBe('p:apikeys:{apikeys}:ab');
  });

  it('creates, finds, changes, lists, rotates and revokes a key', async () => {
    const key = {
      name: 'team-a',
      sha256: digest('sk-a'),
      hint: 'sk-a',
      createdAt: 1,
      settings: { weight: 2 },
    };
    expect(await keys.create(key)).toBe(true);
    expect(await keys.create({ ...key, sha256: digest('sk-a2') })).toBe(false);
    expect(await keys.inUse()).toBe(true);
    expect(await keys.find(key.sha256)).toEqual(key);
    expect(await keys.update('team-a', { weight: null, deadlineMs: 5000 })).toEqual({
      ...key,
      settings: { deadlineMs: 5000 },
    });
    expect((await keys.list()).map((k) => k.name)).toEqual(['team-a']);
    const rotated = await keys.rotate('team-a', digest('sk-b'), 'sk-b');
    expect(rotated).toMatchObject({ name: 'team-a', sha256: digest('sk-b'), settings: { deadlineMs: 5000 } });
    expect(await keys.find(key.sha256)).toBeNull();
    expect(await keys.revoke('team-a')).toEqual(rotated);
    expect(await keys.findByName('team-a')).toBeNull();
  });
});
