import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { admissionKey, admittedUntil } from '@conveyor/queue';
import { createRedis, type RedisClient } from '@conveyor/redis';
import { AdmissionPlaces } from './admission-places.port.js';

/** The places in Redis, in the sorted set the API admits requests with (`admissionKey`). */
@Injectable()
export class RedisAdmissionPlaces extends AdmissionPlaces implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisAdmissionPlaces.name);
  private readonly redis: RedisClient;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    super();
    this.redis = createRedis(config.redis, 'conveyor-worker-admission', 'background', this.logger);
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

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
