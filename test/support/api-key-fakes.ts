import { MemoryFiles } from './batch-fakes.js';
import type { PlatformConfig } from '@conveyor/config';
import { ApiKeyStore } from '../../apps/api/src/auth/api-key.store.js';
import { ApiKeys, type StoredApiKey } from '../../apps/api/src/repositories/api-keys.port.js';

/** No key was ever made at run time: only the configured keys exist. */
export class NoRunTimeKeys extends ApiKeys {
  async find(): Promise<StoredApiKey | null> {
    return null;
  }
  async findByName(): Promise<StoredApiKey | null> {
    return null;
  }
  async list(): Promise<StoredApiKey[]> {
    return [];
  }
  async inUse(): Promise<boolean> {
    return false;
  }
  async create(): Promise<boolean> {
    throw new Error('No keys are made at run time here.');
  }
  async update(): Promise<StoredApiKey | null> {
    return null;
  }
  async rotate(): Promise<StoredApiKey | null> {
    return null;
  }
  async revoke(): Promise<StoredApiKey | null> {
    return null;
  }
}

/** The key store of a configuration's keys alone, as unit tests of what reads a caller's settings need. */
export const configuredKeys = (config: PlatformConfig): ApiKeyStore =>
  new ApiKeyStore(config, new NoRunTimeKeys(), new MemoryFiles());
