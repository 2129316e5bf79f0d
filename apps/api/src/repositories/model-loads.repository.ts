import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { modelLoadingKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import { ModelLoads } from './model-loads.port.js';

/** The loads under way, from the claims workers hold while they load (`modelLoadingKey`). */
@Injectable()
export class ModelLoadsRepository extends ModelLoads {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  /** One command per deployment, sent together: on a cluster, deployments' keys sit in different slots. */
  async loading(deployments: readonly string[]): Promise<Set<string>> {
    const found = await Promise.all(
      deployments.map((d) => this.redis.exists(modelLoadingKey(this.config.redis.prefix, d))),
    );
    return new Set(deployments.filter((_, i) => found[i]));
  }
}
