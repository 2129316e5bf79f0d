import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiKeyList, ApiKeyObject, ChatCompletion, OpenAiErrorBody } from '@conveyor/openai';
import { Redis } from 'ioredis';
import { TestPlatform, deleteKeys } from './support/platform.js';
import { PrivateRedis } from './support/private-redis.js';

const MODEL = 'conveyor-tiny';
const ADMIN_KEY = 'admin-key-for-run-time-keys';
const WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** A call to the admin routes of `base`, with the admin key unless `auth` says otherwise. */
async function admin<T>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  auth: string | null = `Bearer ${ADMIN_KEY}`,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}/v1/admin/keys${path}`, {
    method,
    headers: {
      ...(auth === null ? {} : { authorization: auth }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** The status a cheap authenticated route answers with this key (none: no credentials). */
async function models(base: string, key?: string): Promise<number> {
  const res = await fetch(`${base}/v1/models`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  await res.arrayBuffer();
  return res.status;
}

async function chat(base: string, key: string): Promise<{ status: number; body: unknown; limit: string | null }> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 4 }),
  });
  return { status: res.status, body: await res.json(), limit: res.headers.get('x-ratelimit-limit-requests') };
}

/**
 * Twenty times the 500 ms a replica trusts what it read of a key: a change that has not arrived by then
 * never will (a cache that does not lapse), whereas a loaded machine's slow requests stay far inside it.
 * How long changes take is printed after the tests (docs/sharing.md quotes it), not asserted.
 */
const CHANGE_ARRIVES_MS = 10_000;

/**
 * Milliseconds from now until `probe` holds, polling: an upper bound on how long the change it waits for
 * took to reach what it probes. Fails when it has not held within CHANGE_ARRIVES_MS.
 */
async function msUntil(probe: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - start;
    if (performance.now() - start > CHANGE_ARRIVES_MS) throw new Error('the change never arrived');
    await sleep(10);
  }
}

const created = async (base: string, body: Record<string, unknown>): Promise<ApiKeyObject & { key: string }> => {
  const res = await admin<ApiKeyObject>(base, 'POST', '', body);
  expect(res.status).toBe(200);
  return res.body as ApiKeyObject & { key: string };
};

describe('API keys made at run time, on two API replicas and a worker', () => {
  let platform: TestPlatform;
  let redis: PrivateRedis;
  let a: string;
  let b: string;
  /** Delays, in ms, from a change on one replica to its refusal on the other. */
  const reached: number[] = [];

  beforeAll(async () => {
    // A Redis of this file's own: the test that counts key reads watches it with MONITOR, which on a Redis
    // shared with files running beside this one would carry their traffic too (and ioredis can take a
    // command that arrives with MONITOR's own reply for an answer it is waiting for).
    redis = await PrivateRedis.start();
    platform = await TestPlatform.start({ env: { ADMIN_KEY, REDIS_URL: redis.url } });
    a = platform.baseUrl;
    ({ baseUrl: b } = await platform.startExtraApi());
  });

  afterAll(async () => {
    if (reached.length)
      console.log(`a change reached the other replica within: ${reached.map(Math.round).join(', ')} ms`);
    await platform?.stop();
    await redis?.stop();
  });

  it('answers anyone while no key exists, and asks every replica for a key once the first is made', async () => {
    expect(await models(a)).toBe(200);
    expect(await models(b)).toBe(200);
    const key = await created(a, { name: 'first' });
    expect(await models(a)).toBe(401);
    const ms = await msUntil(async () => (await models(b)) === 401);
    reached.push(ms);
    expect(await models(b, key.key)).toBe(200);
  });

  it('makes a key on one replica that a chat request uses on both, and never shows the key again', async () => {
    const key = await created(a, {
      name: 'team-a',
      rateLimit: { requests: 100, perSeconds: 60 },
      tokenLimit: { perDay: 100_000 },
      tiers: ['default', 'flex'],
      weight: 2,
      deadlineMs: 120_000,
      webhook: { url: 'http://127.0.0.1:9/hook', secret: WEBHOOK_SECRET },
    });
    expect(key.key).toMatch(/^sk-conveyor-[A-Za-z0-9_-]{32}$/);
    expect(key).toMatchObject({
      object: 'api_key',
      name: 'team-a',
      source: 'runtime',
      redacted_value: `sk-conveyor-...${key.key.slice(-4)}`,
      rateLimit: { requests: 100, perSeconds: 60 },
      tokenLimit: { perDay: 100_000 },
      tiers: ['default', 'flex'],
      weight: 2,
      deadlineMs: 120_000,
      webhook: { url: 'http://127.0.0.1:9/hook' },
    });
    for (const base of [a, b]) {
      const reply = await chat(base, key.key);
      expect(reply.status).toBe(200);
      expect((reply.body as ChatCompletion).choices[0]?.message.role).toBe('assistant');
      expect(reply.limit).toBe('100');
    }
    const list = await admin<ApiKeyList>(b, 'GET', '');
    expect(list.body.data.map((k) => k.name)).toEqual(['first', 'team-a']);
    const shown = JSON.stringify(list.body) + JSON.stringify((await admin(b, 'GET', '/team-a')).body);
    expect(shown).not.toContain(key.key);
    expect(shown).not.toContain(createHash('sha256').update(key.key).digest('hex'));
    expect(shown).not.toContain(WEBHOOK_SECRET);
  });

  it('reads a key from Redis at most once per half second on a replica, however many requests use it', async () => {
    const key = await created(a, { name: 'counted' });
    const client = new Redis(redis.url);
    const monitor = await client.monitor();
    const reads: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args.some((arg) => arg.startsWith(`${platform.prefix}:apikeys`))) reads.push(args.join(' '));
    });
    try {
      const start = performance.now();
      for (let i = 0; i < 40; i++) expect(await models(b, key.key)).toBe(200);
      const ms = performance.now() - start;
      console.log(
        `40 requests with one key over ${Math.round(ms)} ms: ${reads.length} key reads (${reads.join('; ')})`,
      );
      expect(reads.length).toBeLessThanOrEqual(Math.ceil(ms / 500) + 1);
      expect(reads.every((r) => /^hgetall /i.test(r))).toBe(true);
    } finally {
      monitor.disconnect();
      client.disconnect();
    }
  });

  it('refuses a key revoked on one replica at once there, and on the other once its cached answer lapses, at any moment', async () => {
    for (let round = 0; round < 4; round++) {
      const key = await created(a, { name: `revoked-${round}` });
      // The other replica holds the key as valid in its cache when it is revoked, at a different moment each round.
      expect(await models(b, key.key)).toBe(200);
      await sleep(round * 150);
      const revoked = await admin(a, 'DELETE', `/revoked-${round}`);
      expect(revoked).toEqual({
        status: 200,
        body: { object: 'api_key.deleted', name: `revoked-${round}`, deleted: true },
      });
      expect(await models(a, key.key)).toBe(401);
      const ms = await msUntil(async () => (await models(b, key.key)) === 401);
      reached.push(ms);
    }
  });

  it('rotates a key: the old key refused (at once here, once the cache lapses there), the new one works with the same settings', async () => {
    const old = await created(a, { name: 'rotated', rateLimit: { requests: 50, perSeconds: 60 } });
    expect(await models(b, old.key)).toBe(200);
    const rotated = await admin<ApiKeyObject & { key: string }>(a, 'POST', '/rotated/rotate');
    expect(rotated.status).toBe(200);
    expect(rotated.body.key).not.toBe(old.key);
    expect(rotated.body).toMatchObject({ name: 'rotated', rateLimit: { requests: 50, perSeconds: 60 } });
    expect(rotated.body.created_at).toBe(old.created_at);
    expect(await models(a, old.key)).toBe(401);
    const ms = await msUntil(async () => (await models(b, old.key)) === 401);
    reached.push(ms);
    const reply = await chat(b, rotated.body.key);
    expect(reply.status).toBe(200);
    expect(reply.limit).toBe('50');
  });

  it("changes a key's settings on every replica: a limit set, one removed", async () => {
    const key = await created(a, { name: 'changed', rateLimit: { requests: 10, perSeconds: 60 }, weight: 3 });
    expect((await chat(b, key.key)).limit).toBe('10');
    const changed = await admin<ApiKeyObject>(a, 'POST', '/changed', {
      rateLimit: { requests: 20, perSeconds: 60 },
      weight: null,
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ rateLimit: { requests: 20, perSeconds: 60 }, weight: null });
    await msUntil(async () => (await chat(b, key.key)).limit === '20');
  });

  it("refuses bad input with 400 in OpenAI's shape, naming the field; a taken name with 409; an unknown key with 404", async () => {
    const bad: Array<[unknown, string | null]> = [
      [{ name: 'has space' }, 'name'],
      [{ name: 'anonymous' }, 'name'],
      [{}, 'name'],
      [{ name: 'x', rateLimit: { requests: 0, perSeconds: 60 } }, 'rateLimit.requests'],
      [{ name: 'x', tiers: ['gold'] }, 'tiers'],
      [{ name: 'x', weight: 'heavy' }, 'weight'],
      [{ name: 'x', webhook: { url: 'http://127.0.0.1:9/hook', secret: 'plain' } }, 'webhook.secret'],
      [{ name: 'x', rpm: 5 }, 'rpm'],
      [[], null],
      ['{"name": ', null],
    ];
    for (const [body, param] of bad) {
      const res = await admin<OpenAiErrorBody>(a, 'POST', '', body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
    }
    const update = await admin<OpenAiErrorBody>(a, 'POST', '/team-a', { name: 'renamed' });
    expect(update.status).toBe(400);
    expect(update.body.error.param).toBe('name');

    const taken = await admin<OpenAiErrorBody>(b, 'POST', '', { name: 'team-a' });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ param: 'name', code: 'api_key_exists' });
    for (const [method, path] of [
      ['GET', '/nobody'],
      ['POST', '/nobody'],
      ['POST', '/nobody/rotate'],
      ['DELETE', '/nobody'],
    ] as const) {
      const res = await admin<OpenAiErrorBody>(
        a,
        method,
        path,
        method === 'POST' && path === '/nobody' ? {} : undefined,
      );
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ type: 'not_found_error', code: 'api_key_not_found' });
    }
  });

  it('refuses the admin routes without the admin key: none, a wrong one, or an API key', async () => {
    const key = await created(a, { name: 'not-admin' });
    for (const auth of [null, 'Bearer wrong-admin-key', `Bearer ${key.key}`]) {
      const res = await admin<OpenAiErrorBody>(b, 'POST', '', { name: 'sneaky' }, auth);
      expect(res.status).toBe(401);
      expect(res.body.error.type).toBe('authentication_error');
    }
    expect((await admin(a, 'GET', '/sneaky')).status).toBe(404);
  });

  it('lists the configured keys of a replica as read-only: they cannot be changed, rotated or revoked here', async () => {
    const { baseUrl: c } = await platform.startExtraApi({ API_KEYS: 'configured-key' });
    const list = await admin<ApiKeyList>(c, 'GET', '');
    const configured = list.body.data.filter((k) => k.source === 'configured');
    expect(configured).toHaveLength(1);
    expect(configured[0]).toMatchObject({ redacted_value: null, created_at: null });
    const name = configured[0]!.name;
    for (const [method, path] of [
      ['POST', `/${name}/rotate`],
      ['DELETE', `/${name}`],
    ] as const) {
      const res = await admin<OpenAiErrorBody>(c, method, path);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'api_key_read_only' });
    }
    expect((await admin<OpenAiErrorBody>(c, 'POST', '', { name })).status).toBe(409);
    expect(await models(c, 'configured-key')).toBe(200);
  });

  it('stays closed when Redis loses its data: a replica started afterwards still asks for a key', async () => {
    await created(a, { name: 'before-the-loss' });
    // Every key of the platform's prefix gone, as after a Redis restart without persistence.
    await deleteKeys(platform.prefix, redis.url);
    const { baseUrl: d } = await platform.startExtraApi();
    expect(await models(d)).toBe(401);
  });
});
