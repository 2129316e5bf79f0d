import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { ClassConstructor } from 'class-transformer';
import { ErrorCode, type ApiKeyDeleted, type ApiKeyList, type ApiKeyObject } from '@conveyor/openai';
import { validateDto } from '@conveyor/protocol';
import { ApiKeyStore, keyDigest } from '../auth/api-key.store.js';
import { ANONYMOUS } from '../auth/caller.decorator.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import {
  API_KEY_SETTINGS,
  ApiKeys,
  type ApiKeySettings,
  type ApiKeySettingsChange,
  type StoredApiKey,
} from '../repositories/api-keys.port.js';
import { CreateApiKeyDto, UpdateApiKeyDto } from './api-key-body.dto.js';
import { KEY_PREFIX, configuredKeyObject, runtimeKeyObject } from './api-key.mapper.js';

/** Characters of a key's end shown in lists, to tell keys apart. */
const HINT_LENGTH = 4;

const notFound = (name: string) =>
  new OpenAiHttpError(404, 'not_found_error', `No API key named '${name}'.`, 'name', ErrorCode.apiKeyNotFound);

const readOnly = (name: string) =>
  new OpenAiHttpError(
    403,
    'permission_error',
    `The key '${name}' comes from configuration (API_KEYS or the deployments file): change it there.`,
    'name',
    ErrorCode.apiKeyReadOnly,
  );

/** A new key (192 random bits) and what is kept of it. */
function newSecret(): { secret: string; sha256: string; hint: string } {
  const secret = `${KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
  return { secret, sha256: keyDigest(secret).toString('hex'), hint: secret.slice(-HINT_LENGTH) };
}

/** A body checked against its class, refusing fields it does not have (a misspelt limit must not pass unseen). */
function parseBody<T extends object>(cls: ClassConstructor<T>, body: unknown, fields: readonly string[]): T {
  const result = validateDto(cls, body ?? {});
  if (!result.ok) throw OpenAiHttpError.invalidRequest(result.problem.message, result.problem.param);
  const unknown = Object.keys(body ?? {}).find((f) => !fields.includes(f));
  if (unknown !== undefined) {
    throw OpenAiHttpError.invalidRequest(
      `Unknown field '${unknown.slice(0, 64)}': a key takes ${fields.join(', ')}.`,
      unknown.slice(0, 64),
    );
  }
  return result.value;
}

/** The settings a body gives, as plain values; null where it removes one. */
function changeOf(dto: UpdateApiKeyDto, body: object): ApiKeySettingsChange {
  const change: Record<string, unknown> = {};
  for (const setting of API_KEY_SETTINGS) {
    if (!(setting in body)) continue;
    const value = (body as Record<string, unknown>)[setting];
    change[setting] = value === null ? null : (JSON.parse(JSON.stringify(dto[setting])) as unknown);
  }
  return change as ApiKeySettingsChange;
}

/**
 * The admin's use cases on API keys: make, list, read, change, rotate and revoke run-time keys, and list
 * the configured ones beside them (read-only). The key is shown once, when made or rotated; every
 * change is dropped from this replica's cache at once and reaches the others within KEY_FRESH_MS.
 */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly keys: ApiKeys,
    private readonly store: ApiKeyStore,
  ) {}

  private configured(name: string) {
    return this.store.configured.find((k) => k.name === name);
  }

  async create(body: unknown): Promise<ApiKeyObject> {
    const dto = parseBody(CreateApiKeyDto, body, ['name', ...API_KEY_SETTINGS]);
    const taken = () =>
      new OpenAiHttpError(
        409,
        'invalid_request_error',
        `An API key named '${dto.name}' exists, or existed: a revoked key's name is never given again, since its files and batches belong to it.`,
        'name',
        ErrorCode.apiKeyExists,
      );
    if (dto.name === ANONYMOUS)
      throw OpenAiHttpError.invalidRequest(
        `name '${ANONYMOUS}' is the caller's name when authentication is off.`,
        'name',
      );
    if (this.configured(dto.name)) throw taken();
    const { secret, sha256, hint } = newSecret();
    const settings = changeOf(dto, body as object) as ApiKeySettings;
    for (const setting of API_KEY_SETTINGS) if (settings[setting] === null) delete settings[setting];
    const key: StoredApiKey = { name: dto.name, sha256, hint, createdAt: Date.now(), settings };
    // Marked first: a key that exists always finds authentication on, even after Redis loses its data.
    await this.store.recordInUse();
    if (!(await this.keys.create(key))) throw taken();
    this.store.forget(key);
    return runtimeKeyObject(key, secret);
  }

  async list(): Promise<ApiKeyList> {
    const runtime = await this.keys.list();
    return {
      object: 'list',
      data: [...this.store.configured.map(configuredKeyObject), ...runtime.map((k) => runtimeKeyObject(k))],
    };
  }

  async get(name: string): Promise<ApiKeyObject> {
    const configured = this.configured(name);
    if (configured) return configuredKeyObject(configured);
    const key = await this.keys.findByName(name);
    if (!key) throw notFound(name);
    return runtimeKeyObject(key);
  }

  async update(name: string, body: unknown): Promise<ApiKeyObject> {
    if (this.configured(name)) throw readOnly(name);
    const dto = parseBody(UpdateApiKeyDto, body, API_KEY_SETTINGS);
    const key = await this.keys.update(name, changeOf(dto, (body ?? {}) as object));
    if (!key) throw notFound(name);
    this.store.forget(key);
    return runtimeKeyObject(key);
  }

  /** A new key for the same name and settings; the old key is refused from now on. */
  async rotate(name: string): Promise<ApiKeyObject> {
    if (this.configured(name)) throw readOnly(name);
    const before = await this.keys.findByName(name);
    if (!before) throw notFound(name);
    const { secret, sha256, hint } = newSecret();
    const key = await this.keys.rotate(name, sha256, hint);
    if (!key) throw notFound(name);
    this.store.forget(before);
    this.store.forget(key);
    return runtimeKeyObject(key, secret);
  }

  async revoke(name: string): Promise<ApiKeyDeleted> {
    if (this.configured(name)) throw readOnly(name);
    const key = await this.keys.revoke(name);
    if (!key) throw notFound(name);
    this.store.forget(key);
    return { object: 'api_key.deleted', name, deleted: true };
  }
}
