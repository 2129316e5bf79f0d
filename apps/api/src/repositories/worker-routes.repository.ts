import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { liveWorkersKey, routeBlocksPrefix, routeLoadKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { WorkerRoutes, type RoutePick } from './worker-routes.port.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    pickWorkerRoute(
      live: string,
      load: string,
      now: number,
      minBlocks: number,
      blocksPrefix: string,
      ...blocks: string[]
    ): Result<[string, string, number], Context>;
  }
}

/** The workers' announcements of what their sequences hold (kept by the workers), read to route a request. */
@Injectable()
export class WorkerRoutesRepository extends WorkerRoutes {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  async pick(deployment: string, blocks: readonly string[], minBlocks: number): Promise<RoutePick> {
    const prefix = this.config.redis.prefix;
    const [outcome, worker, length] = await this.redis.pickWorkerRoute(
      liveWorkersKey(prefix, deployment),
      routeLoadKey(prefix, deployment),
      Date.now(),
      minBlocks,
      routeBlocksPrefix(prefix, deployment),
      ...blocks,
    );
    if (outcome === 'hit') return { outcome, worker, blocks: Number(length) };
    return { outcome: outcome === 'saturated' ? 'saturated' : 'miss' };
  }
}
