import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { responseLeaseKey } from '@conveyor/queue';
import { CommandConnection, Leases } from '@conveyor/redis';
import { ResponseLeases } from './response-leases.port.js';

/** Leases in Redis (see Leases): one key per response, its holder's name, with the lease's TTL. */
@Injectable()
export class ResponseLeaseRepository extends ResponseLeases {
  private readonly leases: Leases;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.leases = new Leases(redis);
  }

  take(responseId: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.leases.acquire(this.key(responseId), holder, ttlMs);
  }

  async renew(responseIds: readonly string[], holder: string, ttlMs: number): Promise<string[]> {
    // One command per key: on a cluster, the leases lie in different slots.
    const held = await Promise.all(responseIds.map((id) => this.leases.renew(this.key(id), holder, ttlMs)));
    return responseIds.filter((_, i) => !held[i]);
  }

  async release(responseId: string, holder: string): Promise<void> {
    await this.leases.release(this.key(responseId), holder);
  }

  private key(responseId: string): string {
    return responseLeaseKey(this.config.redis.prefix, responseId);
  }
}
