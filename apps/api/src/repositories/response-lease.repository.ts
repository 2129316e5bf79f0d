import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { responseLeaseKey } from '@conveyor/queue';
import { createRedis, type RedisClient } from '@conveyor/redis';
import { ResponseLeases } from './response-leases.port.js';

/** Extends the lease only while its holder still holds it (it may have lapsed and been taken meanwhile). */
const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** Deletes the lease only if its holder holds it. */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`;

/** Leases in Redis: one string key per response, its holder's name, with the lease's TTL. */
@Injectable()
export class ResponseLeaseRepository extends ResponseLeases implements OnApplicationShutdown {
  private readonly logger = new Logger(ResponseLeaseRepository.name);
  private readonly redis: RedisClient;
  private readonly prefix: string;

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig) {
    super();
    this.redis = createRedis(config.redis, 'conveyor-api-response-leases', 'command', this.logger);
    this.prefix = config.redis.prefix;
  }

  async take(responseId: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.key(responseId), holder, 'PX', ttlMs, 'NX')) === 'OK';
  }

  async renew(responseIds: readonly string[], holder: string, ttlMs: number): Promise<string[]> {
    // One command per key: on a cluster, the leases lie in different slots.
    const held = await Promise.all(
      responseIds.map((id) => this.redis.eval(RENEW, 1, this.key(id), holder, String(ttlMs))),
    );
    return responseIds.filter((_, i) => held[i] !== 1);
  }

  async release(responseId: string, holder: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.key(responseId), holder);
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }

  private key(responseId: string): string {
    return responseLeaseKey(this.prefix, responseId);
  }
}
