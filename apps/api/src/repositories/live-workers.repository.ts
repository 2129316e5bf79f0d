import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { liveWorkersKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import { LiveWorkers } from './live-workers.port.js';

/** How many workers currently announce themselves for each deployment, from their heartbeats in Redis. */
@Injectable()
export class LiveWorkersRepository extends LiveWorkers {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  /** One command per deployment, sent together: on a cluster, deployments' keys sit in different slots. */
  async counts(deployments: readonly string[]): Promise<Map<string, number>> {
    const now = Date.now();
    const counts = await Promise.all(
      deployments.map((d) => this.redis.zcount(liveWorkersKey(this.config.redis.prefix, d), now, '+inf')),
    );
    return new Map(deployments.map((d, i) => [d, counts[i] ?? 0]));
  }

  async count(deployment: string): Promise<number> {
    return (await this.counts([deployment])).get(deployment) ?? 0;
  }
}
