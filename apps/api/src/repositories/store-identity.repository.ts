import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { fileStoreKey } from '@conveyor/queue';
import { createRedis } from '@conveyor/redis';
import type { Redis } from 'ioredis';
import { StoreIdentities } from './store-identities.port.js';

/** The store identity in Redis, one key per prefix. */
@Injectable()
export class StoreIdentityRepository extends StoreIdentities implements OnApplicationShutdown {
  private readonly logger = new Logger(StoreIdentityRepository.name);
  private readonly redis: Redis;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    super();
    this.redis = createRedis(config.redis, 'conveyor-api-store-identity', 'command', this.logger);
  }

  async claim(identity: string): Promise<string> {
    const key = fileStoreKey(this.config.redis.prefix);
    await this.redis.set(key, identity, 'NX');
    return (await this.redis.get(key)) ?? identity;
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
