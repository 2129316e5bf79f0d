import type { ApiKeyConfig } from '@conveyor/config';

/** A key's settings: every field of a configured key but its name and digest. */
export type ApiKeySettings = Omit<ApiKeyConfig, 'name' | 'sha256'>;

/** The settings a key may have, each kept as a field of its own so an update changes only those it names. */
export const API_KEY_SETTINGS = [
  'rateLimit',
  'tokenLimit',
  'tiers',
  'weight',
  'deadlineMs',
  'webhook',
] as const satisfies readonly (keyof ApiKeySettings)[];

/** What an update changes: a setting given is set, one given as null is removed (its default applies). */
export type ApiKeySettingsChange = { [K in keyof ApiKeySettings]?: ApiKeySettings[K] | null };

/** An API key made at run time. The key itself is never kept: only its digest and a hint for people. */
export interface StoredApiKey {
  /** Unique: the caller's name everywhere (owner of replies, files and batches; usage; rate limits). */
  name: string;
  /** Hex SHA-256 of the key. */
  sha256: string;
  /** A few characters of the key's end, to tell keys apart in a list. */
  hint: string;
  /** When it was created (ms since the epoch); a rotation keeps it. */
  createdAt: number;
  settings: ApiKeySettings;
}

/**
 * The API keys made at run time, shared by every API replica. Services depend on this port; the
 * repository keeping them in Redis implements it.
 */
export abstract class ApiKeys {
  /** The key whose digest this is, or null. One command. */
  abstract find(sha256: string): Promise<StoredApiKey | null>;
  /** The key of this name, or null. */
  abstract findByName(name: string): Promise<StoredApiKey | null>;
  abstract list(): Promise<StoredApiKey[]>;
  /** Whether any key was ever made at run time (it stays true once every key is revoked). One command. */
  abstract inUse(): Promise<boolean>;
  /** Stores a new key; false when a key of its name exists. */
  abstract create(key: StoredApiKey): Promise<boolean>;
  /** Changes a key's settings; null when no key has this name. */
  abstract update(name: string, change: ApiKeySettingsChange): Promise<StoredApiKey | null>;
  /** Gives a key a new digest and hint, keeping its name and settings; the old digest is gone at once. */
  abstract rotate(name: string, sha256: string, hint: string): Promise<StoredApiKey | null>;
  /** Deletes a key; the key it was, or null when no key has this name. */
  abstract revoke(name: string): Promise<StoredApiKey | null>;
}
