import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { batchUnqueuedKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { UnqueuedLines } from './unqueued-lines.port.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    countLineQueued(unqueued: string, batchId: string, ...lines: number[]): Result<number, Context>;
  }
}

/**
 * The lines of running batches not yet queued, in one hash per deployment (see batchUnqueuedKey).
 * Each call touches one deployment's key, so the counts work alike on one Redis and on a cluster.
 */
@Injectable()
export class UnqueuedLinesRepository extends UnqueuedLines {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  async expect(batchId: string, byDeployment: ReadonlyMap<string, number>): Promise<void> {
    for (const [deployment, lines] of byDeployment) {
      await this.redis.hset(this.key(deployment), batchId, lines, `${batchId}:through`, 0);
    }
  }

  async queued(batchId: string, deployment: string, lines: readonly number[]): Promise<void> {
    if (lines.length) await this.redis.countLineQueued(this.key(deployment), batchId, ...lines);
  }

  async forget(batchId: string, deployments: readonly string[]): Promise<void> {
    for (const deployment of deployments) await this.redis.hdel(this.key(deployment), batchId, `${batchId}:through`);
  }

  private key(deployment: string): string {
    return batchUnqueuedKey(this.config.redis.prefix, deployment);
  }
}
