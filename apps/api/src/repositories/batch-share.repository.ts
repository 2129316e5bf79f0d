import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { BATCH_SHARE_LAPSE_MS, batchSharesKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { BatchShares, type ShareRequest } from './batch-shares.port.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    grantBatchLines(
      shares: string,
      now: number,
      batchId: string,
      owner: string,
      weight: number,
      inflight: number,
      wanted: number,
      capacity: number,
      lapseMs: number,
    ): Result<number, Context>;
  }
}

/**
 * The shares in one hash per deployment (see batchSharesKey), granted by one script
 * (scripts/grant-batch-lines.lua): replicas feeding batches of several keys at once see each other's
 * lines in flight, and each call touches one deployment's key, alike on one Redis and on a cluster.
 */
@Injectable()
export class BatchShareRepository extends BatchShares {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  async grant(deployment: string, r: ShareRequest): Promise<number> {
    return this.redis.grantBatchLines(
      this.key(deployment),
      Date.now(),
      r.batchId,
      r.owner,
      r.weight,
      r.inflight,
      r.wanted,
      r.capacity,
      BATCH_SHARE_LAPSE_MS,
    );
  }

  async forget(batchId: string, deployments: readonly string[]): Promise<void> {
    await Promise.all(deployments.map((d) => this.redis.hdel(this.key(d), batchId)));
  }

  private key(deployment: string): string {
    return batchSharesKey(this.config.redis.prefix, deployment);
  }
}
