import { Inject, Injectable } from '@nestjs/common';
import { countSplitAtPriority } from '@conveyor/bullmq-seam';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { BATCH_LINE_PRIORITY, deploymentQueueName, liveWorkersKey, modelLoadingKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import { ModelDemand } from './model-demand.port.js';

/** The demand for on-demand models in Redis: queue counts as the scaling route reads them, the live set, a loading key. */
@Injectable()
export class RedisModelDemand extends ModelDemand {
  private readonly redis: RedisClient;
  private readonly prefix: string;

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig, { redis }: CommandConnection) {
    super();
    this.redis = redis;
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

  async claimLoad(deployment: string, worker: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(modelLoadingKey(this.prefix, deployment), worker, 'PX', ttlMs, 'NX')) === 'OK';
  }

  async renewLoad(deployment: string, worker: string, ttlMs: number): Promise<void> {
    // Only while it is still this worker's: a claim that lapsed (a stalled loader) may be another's now.
    const key = modelLoadingKey(this.prefix, deployment);
    if ((await this.redis.get(key)) === worker) await this.redis.pexpire(key, ttlMs);
  }

  async endLoad(deployment: string, worker: string): Promise<void> {
    const key = modelLoadingKey(this.prefix, deployment);
    if ((await this.redis.get(key)) === worker) await this.redis.del(key);
  }
}
