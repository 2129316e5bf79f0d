import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ADMISSION_RESERVATION_MS, admissionKey, admittedUntil } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { QueueAdmission, type Admission } from './queue-admission.port.js';

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

/**
 * Places in the deployments' queues, kept atomically in Redis so every API replica shares one limit
 * (scripts/reserve-queue-place.lua takes one).
 */
@Injectable()
export class AdmissionRepository extends QueueAdmission {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
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
}
