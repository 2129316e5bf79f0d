import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { bullQueueKey } from '@conveyor/bullmq-seam';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { admissionKey, affinityQueueName, deploymentQueueName, routeQueuesKey } from '@conveyor/queue';
import { createRedis, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { QueueAdmission, type Admission } from './queue-admission.port.js';

/** How long a reservation holds a place if its replica dies before the job reaches the queue. */
const RESERVATION_MS = 10_000;

/**
 * Reserves a place in a deployment's queue: counts the jobs waiting (in the deployment's queue and in
 * the per-worker queues routing sends jobs to) plus the places other requests (on any replica) have
 * reserved and not yet used, and takes one if that is under the limit. One script, so requests that
 * arrive together cannot all see room that only one has. A request's job enters a wait list (under the
 * request's id) a moment before its replica releases the reservation; in that moment it is counted
 * once, not twice. BullMQ pushes new jobs at the head, so only the head of each list (as many entries
 * as jobs can have been added since: one per reservation, and a margin) can hold a reserved request's
 * job. Each head is read once into a set, so a look costs the lists' heads plus the reservations, not
 * their product (one LPOS per reservation per list grew with the square of the traffic).
 *
 * KEYS: the deployment's wait list, its reservations, the set of its workers with a queue of their own.
 * ARGV: limit, now, lapse time, request id, reservations' ttl, and the affinity wait lists' key as
 * prefix and suffix around a worker's name.
 */
const RESERVE = `
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
local lists = {KEYS[1]}
for _, worker in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  table.insert(lists, ARGV[6] .. worker .. ARGV[7])
end
local reserved = redis.call('ZRANGE', KEYS[2], 0, -1)
local queued = 0
local heads = {}
for _, list in ipairs(lists) do
  local length = redis.call('LLEN', list)
  queued = queued + length
  if length > 0 and #reserved > 0 then
    for _, id in ipairs(redis.call('LRANGE', list, 0, #reserved + 63)) do heads[id] = true end
  end
end
for _, id in ipairs(reserved) do
  if not heads[id] then queued = queued + 1 end
end
if queued >= tonumber(ARGV[1]) then return {0, queued} end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return {1, queued}
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    reserveQueuePlace(
      waitList: string,
      reservations: string,
      routedWorkers: string,
      limit: number,
      now: number,
      lapsesAt: number,
      requestId: string,
      ttlMs: number,
      affinityWaitPrefix: string,
      affinityWaitSuffix: string,
    ): Result<[number, number], Context>;
  }
}

/** The wait list key of a worker's own queue, as the text before and after the worker's name. */
function affinityWaitListAround(prefix: string, deployment: string): [string, string] {
  const marker = '\u0000';
  const [before = '', after = ''] = bullQueueKey(prefix, affinityQueueName(deployment, marker), 'wait').split(marker);
  return [before, after];
}

/** Places in the deployments' queues, reserved atomically in Redis so every API replica shares one limit. */
@Injectable()
export class AdmissionRepository extends QueueAdmission implements OnApplicationShutdown {
  private readonly logger = new Logger(AdmissionRepository.name);
  private readonly redis: RedisClient;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    super();
    this.redis = createRedis(config.redis, 'conveyor-api-admission', 'command', this.logger);
    this.redis.defineCommand('reserveQueuePlace', { numberOfKeys: 3, lua: RESERVE });
  }

  async reserve(deployment: string, requestId: string, limit: number): Promise<Admission> {
    const prefix = this.config.redis.prefix;
    const now = Date.now();
    const [admitted, queued] = await this.redis.reserveQueuePlace(
      bullQueueKey(prefix, deploymentQueueName(deployment), 'wait'),
      admissionKey(prefix, deployment),
      routeQueuesKey(prefix, deployment),
      limit,
      now,
      now + RESERVATION_MS,
      requestId,
      RESERVATION_MS * 2,
      ...affinityWaitListAround(prefix, deployment),
    );
    return admitted ? { admitted: true } : { admitted: false, queued };
  }

  async release(deployment: string, requestId: string): Promise<void> {
    await this.redis.zrem(admissionKey(this.config.redis.prefix, deployment), requestId);
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
