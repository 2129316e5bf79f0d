import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { loadConfig, type PlatformConfig } from '@conveyor/config';
import { batchTokenHoldKey, tokenHoldKey, tokenWindowKey, useHashTags } from '@conveyor/queue';
import type { CommandConnection } from '@conveyor/redis';
import { RedisCluster } from '../../../../test/support/redis-cluster.js';
import { apiRedis } from './api-redis.js';
import { TokenQuotaRepository } from './token-quota.repository.js';
import { tokenWindowOf } from './token-quotas.port.js';

/**
 * The quota's scripts on a Redis Cluster of three shards: a script whose keys were in two slots would be
 * refused there (CROSSSLOT), so each running at all is what this checks, for keys of several names.
 */
describe('TokenQuotaRepository on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let connection: CommandConnection;
  let quotas: TokenQuotaRepository;
  let config: PlatformConfig;
  const at = Date.UTC(2031, 4, 6, 10, 30, 15);

  beforeAll(async () => {
    // As the API names keys on a cluster: tagged.
    useHashTags(true);
    cluster = await RedisCluster.start();
    config = loadConfig({
      REDIS_CLUSTER_NODES: cluster.seeds,
      // With cluster seeds, only the URL's password and scheme are used.
      REDIS_URL: 'redis://127.0.0.1:1',
      REDIS_PREFIX: `unit-${randomBytes(6).toString('hex')}`,
    });
    connection = apiRedis(config);
    quotas = new TokenQuotaRepository(config, connection);
    // A cluster client refuses commands until it has learnt the slots, in words of its own.
    for (const end = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 50))) {
      try {
        await quotas.settle('none', 'none', at, 0, at);
        break;
      } catch (err) {
        if (!/isn't ready|writeable|closed/.test((err as Error).message) || Date.now() > end) throw err;
      }
    }
  }, 90_000);

  afterAll(async () => {
    await connection?.onApplicationShutdown();
    await cluster?.stop();
    useHashTags(false);
  });

  it("keeps each key's windows and holds in one slot, so every script runs on a cluster", async () => {
    const prefix = config.redis.prefix;
    for (const key of ['team-a', 'team-b', 'batch-owner', 'k:with:colons']) {
      const limits = { perMinute: 1_000, perDay: 10_000 };
      expect((await quotas.reserve(key, 'r1', 400, limits, at)).refusedBy).toBeNull();
      expect((await quotas.reserve(key, 'r2', 700, limits, at)).refusedBy).toBe('minute');
      expect(await quotas.settle(key, 'r1', at, 100, at + 60_000)).toBe(true);
      expect(await quotas.reserveBatch(key, 'batch_1', 500, 2, 10_000, at)).toEqual({ reserved: true, dayUsed: 600 });
      await quotas.settleBatch(key, 'batch_1', at, { lines: 1, used: 10, ended: false }, at + 60_000);
      await quotas.settleBatch(key, 'batch_1', at, { lines: 0, used: 0, ended: true }, at + 60_000);
      const slots = await Promise.all(
        [
          tokenWindowKey(prefix, key, 'minute', tokenWindowOf('minute', at)),
          tokenWindowKey(prefix, key, 'day', tokenWindowOf('day', at)),
          tokenHoldKey(prefix, key, 'r1'),
          batchTokenHoldKey(prefix, key, 'batch_1'),
        ].map((k) => connection.redis.call('CLUSTER', 'KEYSLOT', k)),
      );
      expect(new Set(slots).size).toBe(1);
    }
  });
});
