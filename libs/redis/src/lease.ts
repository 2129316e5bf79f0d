import type { Result } from 'ioredis';
import type { LuaScript } from './lua-scripts.js';
import type { RedisClient } from './redis-connections.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    renewLease(lease: string, holder: string, ttlMs: number): Result<number, Context>;
    releaseLease(lease: string, holder: string): Result<number, Context>;
  }
}

/** The scripts a connection needs for `Leases`: registered with the process's others (see defineScripts). */
export const LEASE_SCRIPTS: readonly LuaScript[] = [
  { name: 'renewLease', file: new URL('./scripts/renew-lease.lua', import.meta.url) },
  { name: 'releaseLease', file: new URL('./scripts/release-lease.lua', import.meta.url) },
];

/**
 * Leases in Redis: one string key per lease, holding its holder's name, with the lease's TTL. One
 * holder at a time: taking is SET NX PX, and renewing and releasing compare the holder and act in one
 * script, so a holder that stalled past its lease (and lost it to another) can neither extend nor end
 * the new holder's lease. Each call names one key, so leases work alike on a cluster, wherever their
 * keys hash.
 */
export class Leases {
  constructor(private readonly redis: RedisClient) {}

  /** Takes the lease if nobody holds it; true when taken. */
  async acquire(key: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(key, holder, 'PX', ttlMs, 'NX')) === 'OK';
  }

  /** Extends the lease for `ttlMs` if `holder` still holds it; false (nothing changed) otherwise. */
  async renew(key: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.renewLease(key, holder, ttlMs)) === 1;
  }

  /** Renews the lease `holder` holds, or takes it if nobody does; false while another holds it. */
  async hold(key: string, holder: string, ttlMs: number): Promise<boolean> {
    // Renewed first: a holder keeping its lease, the usual case, takes one round trip.
    return (await this.renew(key, holder, ttlMs)) || this.acquire(key, holder, ttlMs);
  }

  /** Gives the lease up if `holder` holds it, so another may take it at once; false when it did not. */
  async release(key: string, holder: string): Promise<boolean> {
    return (await this.redis.releaseLease(key, holder)) === 1;
  }

  /** Whether `holder` holds the lease right now. */
  async holds(key: string, holder: string): Promise<boolean> {
    return (await this.redis.get(key)) === holder;
  }
}
