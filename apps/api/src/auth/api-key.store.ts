import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type ApiKeyConfig, type PlatformConfig } from '@conveyor/config';

/** The configured keys, held as SHA-256 digests only. */
@Injectable()
export class ApiKeyStore {
  private readonly keys: { config: ApiKeyConfig; digest: Buffer }[];

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig) {
    this.keys = config.apiKeys.map((k) => ({ config: k, digest: Buffer.from(k.sha256, 'hex') }));
  }

  /** With no keys configured, authentication is off, as on local servers. */
  get enabled(): boolean {
    return this.keys.length > 0;
  }

  /** The key's config, or null. Every configured digest is compared, in constant time, whatever matches. */
  match(presented: string): ApiKeyConfig | null {
    const digest = createHash('sha256').update(presented, 'utf8').digest();
    let found: ApiKeyConfig | null = null;
    for (const k of this.keys) {
      if (timingSafeEqual(digest, k.digest) && !found) found = k.config;
    }
    return found;
  }
}
