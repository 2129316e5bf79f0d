import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type ApiKeyConfig, type PlatformConfig } from '@conveyor/config';

/**
 * The API keys, held as SHA-256 digests only, and each key's settings (limits, tiers, weight, deadline,
 * webhook) by its name: the guard matches a presented key; the rest of the API looks a caller's
 * settings up by the name the guard recorded, so nothing passes a key's settings along with a request.
 */
@Injectable()
export class ApiKeyStore {
  private readonly keys: { config: ApiKeyConfig; digest: Buffer }[];
  private readonly named: Map<string, ApiKeyConfig>;

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig) {
    this.keys = config.apiKeys.map((k) => ({ config: k, digest: Buffer.from(k.sha256, 'hex') }));
    this.named = new Map(config.apiKeys.map((k) => [k.name, k]));
  }

  /** With no keys configured, authentication is off, as on local servers. */
  get enabled(): boolean {
    return this.keys.length > 0;
  }

  /** The key's config, or null. Every configured digest is compared, in constant time, whatever matches. */
  async match(presented: string): Promise<ApiKeyConfig | null> {
    const digest = createHash('sha256').update(presented, 'utf8').digest();
    let found: ApiKeyConfig | null = null;
    for (const k of this.keys) {
      if (timingSafeEqual(digest, k.digest) && !found) found = k.config;
    }
    return found;
  }

  /** The settings of the key of this name (a request's caller), or null (`anonymous`, or a key gone since). */
  async byName(name: string): Promise<ApiKeyConfig | null> {
    return this.named.get(name) ?? null;
  }
}
