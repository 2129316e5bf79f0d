import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { fileStoreKey } from '@conveyor/queue';
import { createRedis, type RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { StoreIdentities } from './store-identities.port.js';

/**
 * One hash per prefix (one key, so one slot): `identity`, and `h:<holder>` → when that holder's hold
 * lapses. Lapsed holds are dropped first; another identity stands only while one of its holders lives.
 */
const HOLD = `
local now = tonumber(ARGV[3])
local mine = 'h:' .. ARGV[2]
local fields = redis.call('HGETALL', KEYS[1])
local current, others = nil, 0
for i = 1, #fields, 2 do
  local field, value = fields[i], fields[i + 1]
  if field == 'identity' then current = value
  elseif tonumber(value) <= now then redis.call('HDEL', KEYS[1], field)
  elseif field ~= mine then others = others + 1 end
end
if current and current ~= ARGV[1] and others > 0 then return current end
if current ~= ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'identity', ARGV[1], mine, now + tonumber(ARGV[4]))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return ARGV[1]
`;

/** Drops a holder's hold, and the record with its last holder. */
const RELEASE = `
redis.call('HDEL', KEYS[1], 'h:' .. ARGV[1])
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(field, 1, 2) == 'h:' then return 0 end
end
redis.call('DEL', KEYS[1])
return 1
`;

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

/** The store identity in Redis, one hash per prefix. */
@Injectable()
export class StoreIdentityRepository extends StoreIdentities implements OnApplicationShutdown {
  private readonly logger = new Logger(StoreIdentityRepository.name);
  private readonly redis: RedisClient;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    super();
    this.redis = createRedis(config.redis, 'conveyor-api-store-identity', 'command', this.logger);
    this.redis.defineCommand('holdStoreIdentity', { numberOfKeys: 1, lua: HOLD });
    this.redis.defineCommand('releaseStoreIdentity', { numberOfKeys: 1, lua: RELEASE });
  }

  hold(identity: string, holder: string, ttlMs: number): Promise<string> {
    return this.redis.holdStoreIdentity(fileStoreKey(this.config.redis.prefix), identity, holder, Date.now(), ttlMs);
  }

  async release(holder: string): Promise<void> {
    await this.redis.releaseStoreIdentity(fileStoreKey(this.config.redis.prefix), holder);
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
