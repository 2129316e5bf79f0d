import { afterAll, beforeAll, describe, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { DeploymentConfig, PlatformConfig } from '@conveyor/config';
import { routeBlocksKey } from '@conveyor/queue';
import type { CommandConnection } from '@conveyor/redis';
import type { WorkerIdentity } from '../presence/worker-identity.js';
import { EVENTUALLY_MS, waitFor } from '../../../../test/support/jobs.js';
import { workerRedis } from '../worker-redis.js';
import { RedisPrefixRoutes } from './redis-prefix-routes.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('RedisPrefixRoutes against real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  let redis: Redis;
  let routes: RedisPrefixRoutes;
  let connection: CommandConnection;

  beforeAll(() => {
    redis = new Redis(url);
    // Only the Redis settings and the heartbeat are read by the announcement.
    const config = { redis: { url, prefix }, worker: { heartbeatMs: 60_000 } } as PlatformConfig;
    connection = workerRedis(config);
    const identity = { id: 'host:1', routeName: 'host_1', instance: 'host_1~x' } as WorkerIdentity;
    routes = new RedisPrefixRoutes(config, [{ id: 'chat' } as DeploymentConfig], identity, connection);
  });

  afterAll(async () => {
    await routes.onApplicationShutdown();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await connection.onApplicationShutdown();
  });

  /** Waits until the blocks announced are `blocks` (the writes land at the end of the event-loop turn). */
  const announced = (blocks: string[]) =>
    waitFor(
      async () => {
        const held = (await redis.smembers(routeBlocksKey(prefix, 'chat', 'host_1'))).sort();
        return held.join(' ') === blocks.join(' ') ? held : undefined;
      },
      EVENTUALLY_MS,
      `the blocks ${blocks.join(' ')} announced`,
    );

  it('a prompt the engine keeps in host memory stays announced after its sequence moves on, until dropped', async () => {
    routes.held('chat', [0], [['a1', 'a2']]);
    await announced(['a1', 'a2']);
    // The next request saves sequence 0's cells as entry 7 before cutting them, then ends holding B.
    routes.heldApart('chat', { kind: 'kept', sequence: 0, entry: 7 });
    routes.held('chat', [0], [['b1']]);
    await announced(['a1', 'a2', 'b1']);
    routes.heldApart('chat', { kind: 'dropped', entry: 7 });
    await announced(['b1']);
  });
});
