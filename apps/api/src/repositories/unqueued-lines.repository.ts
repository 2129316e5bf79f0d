import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { batchUnqueuedKey } from '@conveyor/queue';
import { createRedis, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { UnqueuedLines } from './unqueued-lines.port.js';

/**
 * Counts one line as queued, unless the batch's counts are gone (it ended) or the line is not past the
 * last one counted. One script on one deployment's key, so two replicas feeding the same batch in turn
 * (a lease taken over) never count a line twice.
 *
 * KEYS: the deployment's unqueued-lines hash. ARGV: batch id, line number.
 */
const QUEUED = `
local left = redis.call('HGET', KEYS[1], ARGV[1])
if not left then return 0 end
local through = ARGV[1] .. ':through'
if tonumber(ARGV[2]) <= tonumber(redis.call('HGET', KEYS[1], through) or '0') then return 0 end
redis.call('HSET', KEYS[1], through, ARGV[2])
if tonumber(left) > 0 then redis.call('HINCRBY', KEYS[1], ARGV[1], -1) end
return 1
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    countLineQueued(unqueued: string, batchId: string, line: number): Result<number, Context>;
  }
}

/**
 * The lines of running batches not yet queued, in one hash per deployment (see batchUnqueuedKey).
 * Each call touches one deployment's key, so the counts work alike on one Redis and on a cluster.
 */
@Injectable()
export class UnqueuedLinesRepository extends UnqueuedLines implements OnApplicationShutdown {
  private readonly logger = new Logger(UnqueuedLinesRepository.name);
  private readonly redis: RedisClient;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    super();
    this.redis = createRedis(config.redis, 'conveyor-api-unqueued-lines', 'command', this.logger);
    this.redis.defineCommand('countLineQueued', { numberOfKeys: 1, lua: QUEUED });
  }

  async expect(batchId: string, byDeployment: ReadonlyMap<string, number>): Promise<void> {
    for (const [deployment, lines] of byDeployment) {
      await this.redis.hset(this.key(deployment), batchId, lines, `${batchId}:through`, 0);
    }
  }

  async queued(batchId: string, deployment: string, line: number): Promise<void> {
    await this.redis.countLineQueued(this.key(deployment), batchId, line);
  }

  async forget(batchId: string, deployments: readonly string[]): Promise<void> {
    for (const deployment of deployments) await this.redis.hdel(this.key(deployment), batchId, `${batchId}:through`);
  }

  private key(deployment: string): string {
    return batchUnqueuedKey(this.config.redis.prefix, deployment);
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
