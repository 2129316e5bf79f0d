import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ADMISSION_RESERVATION_MS, admissionKey, admittedUntil } from '@conveyor/queue';
import { createRedis, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { QueueAdmission, type Admission } from './queue-admission.port.js';

/**
 * Takes a place in a deployment's queue: its places are one sorted set of the requests admitted and
 * not yet taken by a worker, each scored by when its place lapses (so one a replica or worker that died
 * left behind frees itself). Lapsed places go, the rest are counted, and one more is taken if that is
 * under the limit: one script, so requests that arrive together cannot all see room that only one has.
 * It reads nothing of the workers or their queues, so it costs the same with one worker or a thousand.
 *
 * KEYS: the deployment's places. ARGV: now, limit, when the new place lapses, request id, the set's ttl.
 */
const RESERVE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local queued = redis.call('ZCARD', KEYS[1])
if queued >= tonumber(ARGV[2]) then return {0, queued} end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {1, queued}
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    reserveQueuePlace(
      places: string,
      now: number,
      limit: number,
      lapsesAt: number,
      requestId: string,
      ttlMs: number,
    ): Result<[number, number], Context>;
  }
}

/** Places in the deployments' queues, kept atomically in Redis so every API replica shares one limit. */
@Injectable()
export class AdmissionRepository extends QueueAdmission implements OnApplicationShutdown {
  private readonly logger = new Logger(AdmissionRepository.name);
  private readonly redis: RedisClient;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    super();
    this.redis = createRedis(config.redis, 'conveyor-api-admission', 'command', this.logger);
    this.redis.defineCommand('reserveQueuePlace', { numberOfKeys: 1, lua: RESERVE });
  }

  async reserve(deployment: string, requestId: string, limit: number): Promise<Admission> {
    const now = Date.now();
    const [admitted, queued] = await this.redis.reserveQueuePlace(
      admissionKey(this.config.redis.prefix, deployment),
      now,
      limit,
      now + ADMISSION_RESERVATION_MS,
      requestId,
      // Outlives every place in it: a queued one lapses last (admittedUntil).
      this.config.api.queueTimeoutMs + 2 * ADMISSION_RESERVATION_MS,
    );
    return admitted ? { admitted: true } : { admitted: false, queued };
  }

  async queued(deployment: string, requestId: string): Promise<void> {
    // XX: a worker that already took the job has given its place back, which must stay given.
    const until = admittedUntil(Date.now(), this.config.api.queueTimeoutMs);
    await this.redis.zadd(admissionKey(this.config.redis.prefix, deployment), 'XX', until, requestId);
  }

  async release(deployment: string, requestId: string): Promise<void> {
    await this.redis.zrem(admissionKey(this.config.redis.prefix, deployment), requestId);
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
