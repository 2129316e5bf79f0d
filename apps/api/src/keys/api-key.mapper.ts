import type { ApiKeyConfig } from '@conveyor/config';
import type { ApiKeyObject } from '@conveyor/openai';
import type { ApiKeySettings, StoredApiKey } from '../repositories/api-keys.port.js';

/** What every key made here starts with, so a leaked one is recognised by secret scanners and people. */
export const KEY_PREFIX = 'sk-conveyor-';

const settingsOf = (s: ApiKeySettings) => ({
  rateLimit: s.rateLimit ?? null,
  tokenLimit: s.tokenLimit ?? null,
  tiers: s.tiers ?? null,
  weight: s.weight ?? null,
  deadlineMs: s.deadlineMs ?? null,
  webhook: s.webhook ? { url: s.webhook.url } : null,
});

/** A run-time key as the admin routes show it; `key` only when it was just made. */
export function runtimeKeyObject(key: StoredApiKey, secret?: string): ApiKeyObject {
  return {
    object: 'api_key',
    name: key.name,
    source: 'runtime',
    redacted_value: `${KEY_PREFIX}...${key.hint}`,
    created_at: Math.floor(key.createdAt / 1000),
    ...settingsOf(key.settings),
    ...(secret === undefined ? {} : { key: secret }),
  };
}

/** A configured key as the admin routes show it: of the key itself only its digest is known, and not shown. */
export function configuredKeyObject(key: ApiKeyConfig): ApiKeyObject {
  return {
    object: 'api_key',
    name: key.name,
    source: 'configured',
    redacted_value: null,
    created_at: null,
    ...settingsOf(key),
  };
}
