import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { FileStore } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type ApiKeyConfig, type PlatformConfig } from '@conveyor/config';
import { ApiKeys, type StoredApiKey } from '../repositories/api-keys.port.js';
import { ANONYMOUS } from './caller.decorator.js';
import { FreshCache } from './fresh-cache.js';

/**
 * How long a replica trusts what it read of a run-time key (found, or not found). Every replica refuses
 * a revoked or rotated key at most this long after the change, with no message to miss: invalidation
 * over pub/sub would be quicker, but a replica whose subscription drops (a Redis restart, a failover, a
 * cluster resharding) would keep a revoked key working until it noticed. A key in use costs each
 * replica one Redis read per this time, not one per request.
 */
export const KEY_FRESH_MS = 500;

/**
 * The file store's mark that run-time keys were made on the platform whose Redis prefix is `prefix`.
 * Redis's own mark goes if Redis loses its data, and a replica started then would answer every route
 * with no key: the file store keeps this one. One store may serve platforms of several prefixes, each
 * with its own keys, so the mark is the prefix's.
 */
export const keysInUseMark = (prefix: string): string =>
  `api-keys-in-use-${createHash('sha256').update(prefix, 'utf8').digest('hex').slice(0, 32)}`;

/** Entries per cache: far more keys than a platform has; a flood of wrong keys only pushes the oldest out. */
const MAX_CACHED = 10_000;

/** The digest of a presented key, which is what is kept and looked up (never the key). */
export const keyDigest = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

const toConfig = (key: StoredApiKey): ApiKeyConfig => ({ name: key.name, sha256: key.sha256, ...key.settings });

/**
 * The API keys, held as SHA-256 digests only, and each key's settings (limits, tiers, weight, deadline,
 * webhook) by its name: the guard matches a presented key; the rest of the API looks a caller's
 * settings up by the name the guard recorded, so nothing passes a key's settings along with a request.
 *
 * Keys come from configuration (the environment and the deployments file: read-only, checked first, in
 * memory) and from Redis (made at run time through the admin routes), read through short-lived caches.
 */
@Injectable()
export class ApiKeyStore {
  private readonly keys: { config: ApiKeyConfig; digest: Buffer }[];
  private readonly named: Map<string, ApiKeyConfig>;
  private readonly digestCache = new FreshCache<ApiKeyConfig | null>(KEY_FRESH_MS, MAX_CACHED);
  private readonly nameCache = new FreshCache<ApiKeyConfig | null>(KEY_FRESH_MS, MAX_CACHED);
  private readonly inUseCache = new FreshCache<boolean>(KEY_FRESH_MS, 1);
  /** This platform's mark in the file store that run-time keys are in use. */
  private readonly inUseMark: string;
  /** Whether run-time keys were in use when last read; kept while Redis cannot be read. */
  private lastInUse = false;

  constructor(
    @Inject(PLATFORM_CONFIG) config: PlatformConfig,
    private readonly runTime: ApiKeys,
    private readonly files: FileStore,
  ) {
    this.keys = config.apiKeys.map((k) => ({ config: k, digest: Buffer.from(k.sha256, 'hex') }));
    this.named = new Map(config.apiKeys.map((k) => [k.name, k]));
    this.inUseMark = keysInUseMark(config.redis.prefix);
  }

  /**
   * Authentication is on once any key exists. Configured keys decide it without Redis; with none, whether
   * keys are made at run time is read at most once per KEY_FRESH_MS, so with no keys anywhere auth stays
   * off, as on local servers, and the first key made turns it on on every replica within that time. It
   * stays on when every run-time key is revoked: revoking the last key must not open the API to anyone.
   * While Redis cannot be read, the last answer stands: a request then fails on the queue anyway. The
   * file store's mark (keysInUseMark) says so too, so a Redis that lost its data opens nothing.
   */
  async enabled(): Promise<boolean> {
    if (this.keys.length > 0) return true;
    if (this.lastInUse) return true;
    try {
      this.lastInUse = await this.inUseCache.get(
        '',
        async () => (await this.runTime.inUse()) || (await this.files.marked(this.inUseMark)),
      );
    } catch {
      // The last answer read stands.
    }
    return this.lastInUse;
  }

  /** Run-time keys are about to be made: authentication is on from now on, whatever becomes of Redis. */
  async recordInUse(): Promise<void> {
    await this.files.mark(this.inUseMark);
  }

  /** The keys from configuration, which the admin routes list but cannot change. */
  get configured(): readonly ApiKeyConfig[] {
    return this.keys.map((k) => k.config);
  }

  /**
   * The key's config, or null. Every configured digest is compared, in constant time, whatever matches;
   * then the run-time keys, by digest (one Redis read unless cached).
   */
  async match(presented: string): Promise<ApiKeyConfig | null> {
    const digest = keyDigest(presented);
    let found: ApiKeyConfig | null = null;
    for (const k of this.keys) {
      if (timingSafeEqual(digest, k.digest) && !found) found = k.config;
    }
    if (found) return found;
    return this.digestCache.get(digest.toString('hex'), async (since) => {
      const key = await this.runTime.find(digest.toString('hex'));
      if (!key) return null;
      const config = toConfig(key);
      // The caller's settings are looked up by name later in the request: this read answers that too.
      this.nameCache.put(config.name, Promise.resolve(config), since);
      return config;
    });
  }

  /** The settings of the key of this name (a request's caller), or null (`anonymous`, or a key gone since). */
  async byName(name: string): Promise<ApiKeyConfig | null> {
    const configured = this.named.get(name);
    if (configured) return configured;
    if (name === ANONYMOUS) return null;
    return this.nameCache.get(name, async () => {
      const key = await this.runTime.findByName(name);
      return key && toConfig(key);
    });
  }

  /** Drops what this replica holds of a run-time key that changed, so it sees the change at once. */
  forget(key: { name: string; sha256: string }): void {
    this.digestCache.delete(key.sha256);
    this.nameCache.delete(key.name);
    this.inUseCache.delete('');
  }
}
