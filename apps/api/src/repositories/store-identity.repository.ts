import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { fileStoreKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { StoreIdentities } from './store-identities.port.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    holdStoreIdentity(
      key: string,
      identity: string,
      holder: string,
      now: number,
      ttlMs: number,
    ): Result<string, Context>;
    releaseStoreIdentity(key: string, holder: string): Result<number, Context>;
  }
}

/**
 * The store identity in Redis, one hash per prefix (scripts/hold-store-identity.lua). Not a lease (see
 * Leases in @conveyor/redis): every live replica holds the record at once, each with a lapse of its
 * own, and the record stands while any of them lives.
 */
@Injectable()
export class StoreIdentityRepository extends StoreIdentities {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  hold(identity: string, holder: string, ttlMs: number): Promise<string> {
    return this.redis.holdStoreIdentity(fileStoreKey(this.config.redis.prefix), identity, holder, Date.now(), ttlMs);
  }

  async release(holder: string): Promise<void> {
    await this.redis.releaseStoreIdentity(fileStoreKey(this.config.redis.prefix), holder);
  }
}
