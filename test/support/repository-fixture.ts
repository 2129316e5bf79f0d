import { afterAll, beforeAll, beforeEach } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformConfig } from '@conveyor/config';
import type { CommandConnection } from '@conveyor/redis';
import { apiRedis } from '../../apps/api/src/repositories/api-redis.js';
import { untilConnected } from './connected.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** One API repository against the shared Redis, as a medium spec sets it up; read its fields inside tests. */
export interface RepositoryFixture<R> {
  /** The spec's own key prefix: its keys are deleted after it. */
  readonly prefix: string;
  readonly config: PlatformConfig;
  /** A plain client, for what a test does beside the repository (a worker's part, a look at the keys). */
  redis: Redis;
  repository: R;
  /** A new deployment id for each test, so no test sees another's keys. */
  deployment: string;
}

/**
 * Makes the repository on the API's one command connection (its scripts loaded) over a random prefix, with
 * `config`'s other settings; waits until `probe` answers; deletes the prefix's keys and closes both clients
 * after the spec.
 */
export function useRepository<R>(
  make: (config: PlatformConfig, connection: CommandConnection) => R,
  probe: (repository: R) => Promise<unknown>,
  config: Partial<PlatformConfig> = {},
): RepositoryFixture<R> {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  const t = { prefix, config: { ...config, redis: { url, prefix } } as PlatformConfig } as RepositoryFixture<R>;
  let connection: CommandConnection;

  beforeAll(async () => {
    t.redis = new Redis(url);
    connection = apiRedis(t.config);
    t.repository = make(t.config, connection);
    await untilConnected(() => probe(t.repository));
  });
  beforeEach(() => {
    t.deployment = `d-${randomBytes(4).toString('hex')}`;
  });
  afterAll(async () => {
    const keys = await t.redis.keys(`${prefix}:*`);
    if (keys.length) await t.redis.del(...keys);
    await connection?.onApplicationShutdown();
    t.redis.disconnect();
  });
  return t;
}
