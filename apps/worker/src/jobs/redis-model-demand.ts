import { Inject, Injectable } from '@nestjs/common';
import { countSplitAtPriority } from '@conveyor/bullmq-seam';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { BATCH_LINE_PRIORITY, deploymentQueueName, liveWorkersKey, modelLoadingKey } from '@conveyor/queue';
import { CommandConnection, Leases, type RedisClient } from '@conveyor/redis';
import { ModelDemand } from './model-demand.port.js';

/**
 * The demand for on-demand models in Redis: queue counts as the scaling route reads them, the live set,
 * and a deployment's one load as a lease (`modelLoadingKey`), so a loader that stalled past it can neither
 * extend nor end another's.
 */
@Injectable()
export class RedisModelDemand extends ModelDemand {
  private readonly redis: RedisClient;
  private readonly leases: Leases;
  private readonly prefix: string;

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig, { redis }: CommandConnection) {
    super();
    this.redis = redis;
    this.leases = new Leases(redis);
    this.prefix = config.redis.prefix;
  }

  async waiting(deployment: string): Promise<number> {
    const counts = await countSplitAtPriority(
      this.redis,
      this.prefix,
      deploymentQueueName(deployment),
      BATCH_LINE_PRIORITY,
    );
    return counts.wait + counts.before + counts.from + counts.delayed;
  }

  async liveWorkers(deployment: string): Promise<number> {
    return this.redis.zcount(liveWorkersKey(this.prefix, deployment), Date.now(), '+inf');
  }

  claimLoad(deployment: string, worker: string, ttlMs: number): Promise<boolean> {
    return this.leases.acquire(modelLoadingKey(this.prefix, deployment), worker, ttlMs);
  }

  async renewLoad(deployment: string, worker: string, ttlMs: number): Promise<void> {
    await this.leases.renew(modelLoadingKey(this.prefix, deployment), worker, ttlMs);
  }

  async endLoad(deployment: string, worker: string): Promise<void> {
    await this.leases.release(modelLoadingKey(this.prefix, deployment), worker);
  }
}
