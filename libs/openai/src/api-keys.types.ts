/** The service tiers a key may ask for, as the chat and responses routes name them. */
type Tier = 'auto' | 'default' | 'flex' | 'priority';

/**
 * An API key as the admin routes show it (`/v1/admin/keys`): never the key or its digest, only a hint.
 * Its settings are in the deployments file's `apiKeys[]` form; null where unset (the default applies).
 */
export interface ApiKeyObject {
  object: 'api_key';
  /** Unique: the caller's name in usage, ownership of replies, files and batches, and limits. */
  name: string;
  /** `runtime`: made through the admin routes, kept in Redis. `configured`: from the environment or deployments file, read-only. */
  source: 'runtime' | 'configured';
  /** The key's first and last characters (`sk-conveyor-...AbCd`); null for a configured key, of which only a digest is known. */
  redacted_value: string | null;
  /** Unix seconds; null for a configured key. */
  created_at: number | null;
  rateLimit: { requests: number; perSeconds: number } | null;
  tokenLimit: { perMinute?: number; perDay?: number } | null;
  tiers: Tier[] | null;
  weight: number | null;
  deadlineMs: number | null;
  /** Where the key's batch events go; its signing secret is never shown. */
  webhook: { url: string } | null;
  /** The key itself: only in the answer that created or rotated it. */
  key?: string;
}

export interface ApiKeyList {
  object: 'list';
  data: ApiKeyObject[];
}

export interface ApiKeyDeleted {
  object: 'api_key.deleted';
  name: string;
  deleted: true;
}
