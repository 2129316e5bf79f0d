import { MemoryFiles } from '../../../../test/support/batch-fakes.js';
import { describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '@conveyor/config';
import { ApiKeys, type ApiKeySettingsChange, type StoredApiKey } from '../repositories/api-keys.port.js';
import { ApiKeyStore, KEY_FRESH_MS, keyDigest } from './api-key.store.js';

/** Run-time keys in memory, counting the reads a store makes of them. */
class CountedKeys extends ApiKeys {
  readonly keys = new Map<string, StoredApiKey>();
  reads = 0;
  failing = false;
  made = false;

  private read(): void {
    this.reads++;
    if (this.failing) throw new Error('Redis is away');
  }
  async find(sha256: string) {
    this.read();
    return this.keys.get(sha256) ?? null;
  }
  async findByName(name: string) {
    this.read();
    return [...this.keys.values()].find((k) => k.name === name) ?? null;
  }
  async list() {
    return [...this.keys.values()];
  }
  async inUse() {
    this.read();
    return this.made;
  }
  async create(key: StoredApiKey) {
    this.keys.set(key.sha256, key);
    this.made = true;
    return true;
  }
  async update(_name: string, _change: ApiKeySettingsChange): Promise<StoredApiKey | null> {
    return null;
  }
  async rotate(): Promise<StoredApiKey | null> {
    return null;
  }
  async revoke(name: string) {
    const key = await this.findByName(name);
    if (key) this.keys.delete(key.sha256);
    return key;
  }
}

const stored = (name: string, secret: string): StoredApiKey => ({
  name,
  sha256: keyDigest(secret).toString('hex'),
  hint: secret.slice(-4),
  createdAt: 0,
  settings: { weight: 3 },
});

const storeWith = (env: Record<string, string> = {}) => {
  const runTime = new CountedKeys();
  const files = new MemoryFiles();
  return { runTime, files, store: new ApiKeyStore(loadConfig({ MODEL: 'tiny', ...env }), runTime, files) };
};

/** Past the time a replica trusts what it read. */
const pastFresh = () => sleep(KEY_FRESH_MS + 100);

describe('ApiKeyStore', () => {
  it('is off with no key anywhere, asking Redis once per freshness time, not per request', async () => {
    const { runTime, store } = storeWith();
    for (let i = 0; i < 20; i++) expect(await store.enabled()).toBe(false);
    expect(runTime.reads).toBe(1);
    await runTime.create(stored('team-a', 'sk-a-0001'));
    await pastFresh();
    expect(await store.enabled()).toBe(true);
    expect(runTime.reads).toBe(2);
  });

  it('stays on once a key was made at run time, every key revoked or not, and asks Redis no more', async () => {
    const { runTime, store } = storeWith();
    await runTime.create(stored('team-a', 'sk-a-0001'));
    expect(await store.enabled()).toBe(true);
    await runTime.revoke('team-a');
    await pastFresh();
    const reads = runTime.reads;
    expect(await store.enabled()).toBe(true);
    expect(runTime.reads).toBe(reads);
  });

  it('is on in a replica started after Redis lost its data, once keys were made: the file store remembers', async () => {
    const { files, store } = storeWith();
    await store.recordInUse();
    // A replica started afterwards: Redis knows of no key (its data lost), the shared file store does.
    const after = new ApiKeyStore(loadConfig({ MODEL: 'tiny' }), new CountedKeys(), files);
    expect(await after.enabled()).toBe(true);
    expect(await storeWith().store.enabled()).toBe(false);
    // A platform of another Redis prefix sharing the file store has keys of its own, or none.
    const other = new ApiKeyStore(loadConfig({ MODEL: 'tiny', REDIS_PREFIX: 'other' }), new CountedKeys(), files);
    expect(await other.enabled()).toBe(false);
  });

  it('is on with a configured key without reading Redis, and matches that key in memory', async () => {
    const { runTime, store } = storeWith({ API_KEYS: 'configured-key' });
    expect(await store.enabled()).toBe(true);
    expect((await store.match('configured-key'))?.name).toBeDefined();
    expect(runTime.reads).toBe(0);
  });

  it('matches a run-time key with one read, then answers the key and its name from cache', async () => {
    const { runTime, store } = storeWith();
    await runTime.create(stored('team-a', 'sk-a-0001'));
    const matches = await Promise.all(Array.from({ length: 10 }, () => store.match('sk-a-0001')));
    expect(matches.every((m) => m?.name === 'team-a' && m.weight === 3)).toBe(true);
    expect(await store.byName('team-a')).toMatchObject({ name: 'team-a', weight: 3 });
    expect(runTime.reads).toBe(1);
  });

  it('keeps a miss as briefly as a hit, so a wrong key repeated costs one read per freshness time', async () => {
    const { runTime, store } = storeWith();
    for (let i = 0; i < 5; i++) expect(await store.match('sk-wrong')).toBeNull();
    expect(runTime.reads).toBe(1);
    // A key made since is found once the miss is stale.
    await runTime.create(stored('late', 'sk-wrong'));
    await pastFresh();
    expect((await store.match('sk-wrong'))?.name).toBe('late');
  });

  it('refuses a key revoked elsewhere once what it read is stale, and at once where it is forgotten', async () => {
    const { runTime, store } = storeWith();
    const key = stored('team-a', 'sk-a-0001');
    await runTime.create(key);
    expect(await store.match('sk-a-0001')).not.toBeNull();
    await runTime.revoke('team-a');
    await pastFresh();
    expect(await store.match('sk-a-0001')).toBeNull();
    expect(await store.byName('team-a')).toBeNull();

    await runTime.create(key);
    await pastFresh();
    expect(await store.match('sk-a-0001')).not.toBeNull();
    await runTime.revoke('team-a');
    store.forget(key);
    expect(await store.match('sk-a-0001')).toBeNull();
  });

  it('keeps no failed read: Redis away fails a run-time key, and the next request reads again', async () => {
    const { runTime, store } = storeWith();
    await runTime.create(stored('team-a', 'sk-a-0001'));
    runTime.failing = true;
    await expect(store.match('sk-a-0001')).rejects.toThrow('Redis is away');
    runTime.failing = false;
    expect((await store.match('sk-a-0001'))?.name).toBe('team-a');
  });

  it('keeps the last answer it read while Redis is away', async () => {
    const { runTime, store } = storeWith();
    runTime.failing = true;
    expect(await store.enabled()).toBe(false);
    runTime.failing = false;
    await runTime.create(stored('team-a', 'sk-a-0001'));
    expect(await store.enabled()).toBe(true);
  });

  it('never reads Redis for the anonymous caller', async () => {
    const { runTime, store } = storeWith();
    expect(await store.byName('anonymous')).toBeNull();
    expect(runTime.reads).toBe(0);
  });
});
