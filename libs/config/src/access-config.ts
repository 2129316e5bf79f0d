import type { ApiKeyConfig } from './config.types.js';
import type { EnvReader } from './env/env-reader.js';
import { hashKey } from './hash-key.js';

/** The API keys the environment gives, and the dashboard's key, as digests only. */
export function readAccessKeys(r: EnvReader): { apiKeys: ApiKeyConfig[]; adminKeySha256: string | null } {
  // Keys from the environment are plain text; only their hashes are kept.
  const apiKeys: ApiKeyConfig[] = (r.optionalString('API_KEYS') ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .map((key, i) => ({ name: `env-${i + 1}`, sha256: hashKey(key) }));

  const adminKey = r.optionalString('ADMIN_KEY');
  const adminDigest = r.optionalString('ADMIN_KEY_SHA256')?.toLowerCase();
  r.check(!(adminKey && adminDigest), 'ADMIN_KEY and ADMIN_KEY_SHA256 are exclusive: set one');
  r.check(
    !adminDigest || /^[0-9a-f]{64}$/.test(adminDigest),
    'ADMIN_KEY_SHA256 must be 64 hex digits (npm run hash-key -- <key>)',
  );
  return { apiKeys, adminKeySha256: adminKey ? hashKey(adminKey) : (adminDigest ?? null) };
}
