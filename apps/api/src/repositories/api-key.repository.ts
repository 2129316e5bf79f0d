import { Inject, Injectable } from '@nestjs/common';
import type { Result } from 'ioredis';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { apiKeyIndexKey, apiKeyRecordKey, apiKeyRetiredNamesKey, apiKeysInUseKey } from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';
import {
  API_KEY_SETTINGS,
  ApiKeys,
  type ApiKeySettings,
  type ApiKeySettingsChange,
  type StoredApiKey,
} from './api-keys.port.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    createApiKey(
      index: string,
      record: string,
      inUse: string,
      retired: string,
      ...args: (string | number)[]
    ): Result<number, Context>;
    updateApiKey(index: string, record: string, ...args: (string | number)[]): Result<number, Context>;
    rotateApiKey(
      index: string,
      oldRecord: string,
      newRecord: string,
      name: string,
      oldSha256: string,
      newSha256: string,
      hint: string,
    ): Result<number, Context>;
    revokeApiKey(index: string, record: string, retired: string, name: string, sha256: string): Result<number, Context>;
  }
}

/** A change another admin made between reading a key's digest and changing it is retried this often. */
const ATTEMPTS = 3;

/**
 * Run-time API keys in Redis: an index of name to digest, and a hash per key found by its digest, with
 * each setting a JSON field of its own. The key itself is never stored.
 */
@Injectable()
export class ApiKeyRepository extends ApiKeys {
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  private get index(): string {
    return apiKeyIndexKey(this.config.redis.prefix);
  }

  private record(sha256: string): string {
    return apiKeyRecordKey(this.config.redis.prefix, sha256);
  }

  private get retired(): string {
    return apiKeyRetiredNamesKey(this.config.redis.prefix);
  }

  async find(sha256: string): Promise<StoredApiKey | null> {
    return fromHash(sha256, await this.redis.hgetall(this.record(sha256)));
  }

  async findByName(name: string): Promise<StoredApiKey | null> {
    const sha256 = await this.redis.hget(this.index, name);
    return sha256 ? this.find(sha256) : null;
  }

  /** The index, then every record in one pipeline: they share a slot on a cluster. */
  async list(): Promise<StoredApiKey[]> {
    const digests = Object.values(await this.redis.hgetall(this.index));
    if (!digests.length) return [];
    const pipeline = this.redis.pipeline();
    for (const sha256 of digests) pipeline.hgetall(this.record(sha256));
    const replies = (await pipeline.exec()) ?? [];
    return digests
      .map((sha256, i) => fromHash(sha256, (replies[i]?.[1] ?? {}) as Record<string, string>))
      .filter((k): k is StoredApiKey => k !== null)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async inUse(): Promise<boolean> {
    return (await this.redis.exists(apiKeysInUseKey(this.config.redis.prefix))) === 1;
  }

  async create(key: StoredApiKey): Promise<boolean> {
    const fields: string[] = ['name', key.name, 'hint', key.hint, 'created', String(key.createdAt)];
    for (const setting of API_KEY_SETTINGS) {
      const value = key.settings[setting];
      if (value !== undefined) fields.push(setting, JSON.stringify(value));
    }
    return (
      (await this.redis.createApiKey(
        this.index,
        this.record(key.sha256),
        apiKeysInUseKey(this.config.redis.prefix),
        apiKeyRetiredNamesKey(this.config.redis.prefix),
        key.name,
        key.sha256,
        ...fields,
      )) === 1
    );
  }

  async update(name: string, change: ApiKeySettingsChange): Promise<StoredApiKey | null> {
    const set: string[] = [];
    const removed: string[] = [];
    for (const setting of API_KEY_SETTINGS) {
      const value = change[setting];
      if (value === null) removed.push(setting);
      else if (value !== undefined) set.push(setting, JSON.stringify(value));
    }
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const sha256 = await this.redis.hget(this.index, name);
      if (!sha256) return null;
      const args = [name, sha256, set.length / 2, ...set, ...removed];
      if ((await this.redis.updateApiKey(this.index, this.record(sha256), ...args)) === 1) return this.find(sha256);
    }
    return null;
  }

  async rotate(name: string, sha256: string, hint: string): Promise<StoredApiKey | null> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const old = await this.redis.hget(this.index, name);
      if (!old) return null;
      const moved = await this.redis.rotateApiKey(
        this.index,
        this.record(old),
        this.record(sha256),
        name,
        old,
        sha256,
        hint,
      );
      if (moved === 1) return this.find(sha256);
    }
    return null;
  }

  async revoke(name: string): Promise<StoredApiKey | null> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const sha256 = await this.redis.hget(this.index, name);
      if (!sha256) return null;
      const key = await this.find(sha256);
      if (key && (await this.redis.revokeApiKey(this.index, this.record(sha256), this.retired, name, sha256)) === 1)
        return key;
    }
    return null;
  }
}

/** A key's record as the key, or null for an empty hash (no such key). */
function fromHash(sha256: string, hash: Record<string, string>): StoredApiKey | null {
  if (!hash.name) return null;
  const settings: Record<string, unknown> = {};
  for (const setting of API_KEY_SETTINGS) {
    const text = hash[setting];
    if (text !== undefined) settings[setting] = JSON.parse(text) as unknown;
  }
  return {
    name: hash.name,
    sha256,
    hint: hash.hint ?? '',
    createdAt: Number(hash.created) || 0,
    settings: settings as ApiKeySettings,
  };
}
