import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import {
  ADMISSION_ASKING_MS,
  ADMISSION_RESERVATION_MS,
  admissionAskingKey,
  admissionHeldKey,
  admissionHeldPrefix,
  admissionKey,
  admittedUntil,
} from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { QueueAdmission, type Admission, type Asker } from './queue-admission.port.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    reserveQueuePlace(
      places: string,
      asking: string,
      held: string,
      now: number,
      limit: number,
      lapsesAt: number,
      requestId: string,
      ttlMs: number,
      keyName: string,
      weight: number,
      askingMs: number,
      heldPrefix: string,
    ): Result<[number, number, number?, number?], Context>;
  }
}

/**
 * Places in the deployments' queues, kept atomically in Redis so every API replica shares one limit
 * (scripts/reserve-queue-place.lua takes one, and shares them by weight between the keys asking).
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

  async reserve(deployment: string, requestId: string, limit: number, asker?: Asker): Promise<Admission> {
    const now = Date.now();
    const prefix = this.config.redis.prefix;
    const [admitted, queued, held, share] = await this.redis.reserveQueuePlace(
      admissionKey(prefix, deployment),
      admissionAskingKey(prefix, deployment),
      admissionHeldKey(prefix, deployment, asker?.name ?? ''),
      now,
      limit,
      now + ADMISSION_RESERVATION_MS,
      requestId,
      // Outlives every place in it: a queued one lapses last (admittedUntil).
      this.config.api.queueTimeoutMs + 2 * ADMISSION_RESERVATION_MS,
      asker?.name ?? '',
      asker?.weight ?? 1,
      ADMISSION_ASKING_MS,
      admissionHeldPrefix(prefix, deployment),
    );
    if (admitted) return { admitted: true };
    return held === undefined ? { admitted: false, queued } : { admitted: false, queued, held, share };
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
