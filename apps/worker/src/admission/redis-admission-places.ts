import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { admissionKey, admittedUntil } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import { AdmissionPlaces } from './admission-places.port.js';

/** The places in Redis, in the sorted set the API admits requests with (`admissionKey`). */
@Injectable()
export class RedisAdmissionPlaces extends AdmissionPlaces {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  async taken(deployment: string, requestId: string): Promise<void> {
    await this.redis.zrem(admissionKey(this.config.redis.prefix, deployment), requestId);
  }

  async waitAgain(deployment: string, requestIds: readonly string[]): Promise<void> {
    if (!requestIds.length) return;
    const until = admittedUntil(Date.now(), this.config.api.queueTimeoutMs);
    await this.redis.zadd(
      admissionKey(this.config.redis.prefix, deployment),
      ...requestIds.flatMap((id) => [until, id]),
    );
  }
}
