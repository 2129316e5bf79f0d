import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { liveWorkersKey, routeBlocksPrefix, routeLoadKey } from '@conveyor/queue';
import { createRedis, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { WorkerRoutes, type RoutePick } from './worker-routes.port.js';

/**
 * For each live worker, the longest run of the request's block hashes its set holds: a binary search,
 * since a worker holding block i holds every block before it (the hashes are chained). Then the best
 * worker with a free sequence; its count goes down by one, so the next request routed before the
 * worker reports again sees it one fuller. One script: one round trip, and replicas never read a
 * count another is changing.
 */
const PICK = `
local live = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf')
local minBlocks = tonumber(ARGV[2])
local n = #ARGV - 3
local best, bestLength, bestFree, held = nil, 0, 0, false
for _, id in ipairs(live) do
  -- Heartbeats name a worker by its id; its keys by that id made safe for names (routeWorkerName).
  local worker = (string.gsub(id, '[^%w%._%-]', '_'))
  local key = ARGV[3] .. worker
  local lo, hi = 0, n
  while lo < hi do
    local mid = math.floor((lo + hi + 1) / 2)
    if redis.call('SISMEMBER', key, ARGV[3 + mid]) == 1 then lo = mid else hi = mid - 1 end
  end
  if lo >= minBlocks then
    held = true
    local free = tonumber(redis.call('HGET', KEYS[2], worker) or '0') or 0
    if free > 0 and (lo > bestLength or (lo == bestLength and free > bestFree)) then
      best, bestLength, bestFree = worker, lo, free
    end
  end
end
if best then
  redis.call('HINCRBY', KEYS[2], best, -1)
  return {'hit', best, bestLength}
end
if held then return {'saturated', '', 0} end
return {'miss', '', 0}
`;

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
export class WorkerRoutesRepository extends WorkerRoutes implements OnApplicationShutdown {
  private readonly logger = new Logger(WorkerRoutesRepository.name);
  private readonly redis: RedisClient;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    super();
    this.redis = createRedis(config.redis, 'conveyor-api-routes', 'command', this.logger);
    this.redis.defineCommand('pickWorkerRoute', { numberOfKeys: 2, lua: PICK });
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

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
