import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { liveWorkersKey, routeLoadKey, routeWorkerName } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import { FleetState, type DeploymentFleet } from './fleet-state.port.js';

/** A deployment's live workers from their heartbeats, and their free sequences from what they announce for routing. */
@Injectable()
export class FleetStateRepository extends FleetState {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  /** Two reads of one deployment's keys (one slot on a cluster), sent together. */
  async of(deployment: string): Promise<DeploymentFleet> {
    const prefix = this.config.redis.prefix;
    const [workers, load] = await Promise.all([
      this.redis.zrangebyscore(liveWorkersKey(prefix, deployment), Date.now(), '+inf'),
      this.redis.hgetall(routeLoadKey(prefix, deployment)),
    ]);
    let free = 0;
    let announced = 0;
    const perWorker: DeploymentFleet['perWorker'] = [];
    for (const id of workers) {
      const count = load[routeWorkerName(id)];
      if (count === undefined) {
        perWorker.push({ id, free: null });
        continue;
      }
      announced++;
      // A count a request routed here took down before the worker reported again can dip below zero.
      const own = Math.max(0, Number(count) || 0);
      free += own;
      perWorker.push({ id, free: own });
    }
    return { workers, free, announced, perWorker };
  }
}
