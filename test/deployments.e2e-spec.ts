import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { hashKey } from '@conveyor/config';
import type { Batch, ChatCompletion, FileObject, ListPage, ModelList, OpenAiErrorBody } from '@conveyor/openai';
import { deploymentQueueName } from '@conveyor/queue';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { readJson } from './support/json.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';
import { readSse } from './support/sse.js';

const MAIN_KEY = 'sk-main-0123456789';
const LIMITED_KEY = 'sk-limited-0123456789';
const OTHER_KEY = 'sk-other-0123456789';
const hello = [{ role: 'user', content: 'Hello deployments.' }];

/** Deployment alpha: a private app with presets; beta: a public app. Each gets its own worker. */
const config = writeDeploymentsFile({
  deployments: [
    {
      id: 'alpha',
      model: 'tiny',
      parallel: 1,
      defaults: { temperature: 0, max_tokens: 5 },
      // A test below repeats a request for the same text: only the exact prompt cache promises that.
      promptCache: 'exact',
      alias: { org: 'acme', app: 'private-chat' },
      auth: 'private',
    },
    { id: 'beta', model: 'tiny', parallel: 1, alias: { org: 'acme', app: 'open-chat' }, auth: 'public' },
  ],
  apiKeys: [
    { name: 'main', sha256: hashKey(MAIN_KEY) },
    { name: 'limited', sha256: hashKey(LIMITED_KEY), rateLimit: { requests: 3, perSeconds: 60 } },
    { name: 'other', sha256: hashKey(OTHER_KEY) },
  ],
});

describe('deployments, seed forms, API keys, readiness and routing', () => {
  let platform: TestPlatform;
  const url = (path: string) => `${platform.baseUrl}${path}`;
  const json = (body: object, authorization?: string): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify(body),
  });
  const get = (path: string, authorization?: string) =>
    fetch(url(path), { headers: authorization ? { authorization } : {} });

  beforeAll(async () => {
    platform = await TestPlatform.start({
      workers: 0,
      env: { CONVEYOR_CONFIG: config, QUEUE_TIMEOUT_MS: '20000', HEARTBEAT_MS: '300' },
    });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  describe('before any worker is up', () => {
    it('is live but not ready, and lists both deployments as without workers', async () => {
      expect((await get('/health')).status).toBe(200);
      const ready = await get('/ready');
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({
        status: 'not_ready',
        deployments: { alpha: { live_workers: 0 }, beta: { live_workers: 0 } },
      });
      const models = await readJson<ModelList>(await get('/v1/models', `Bearer ${MAIN_KEY}`));
      expect(models.data.map((m) => [m.id, m.status])).toEqual([
        ['alpha', 'no_workers'],
        ['beta', 'no_workers'],
      ]);
    });

    it('fails a request with 503 when no worker takes it within the queue timeout, and withdraws it', async () => {
      const started = Date.now();
      const res = await fetch(
        url('/v1/chat/completions'),
        json({ model: 'beta', messages: hello, max_tokens: 2 }, `Bearer ${MAIN_KEY}`),
      );
      expect(res.status).toBe(503);
      expect(Date.now() - started).toBeGreaterThanOrEqual(7900);
      const body = await readJson<OpenAiErrorBody>(res);
      expect(body.error).toMatchObject({ type: 'service_unavailable', code: 'service_unavailable' });
      expect(body.error.message).toMatch(/No worker took the request for "beta" within 20000 ms \(0 live workers\)/);
      const queue = new Queue(deploymentQueueName('beta'), { connection: { url: REDIS_URL }, prefix: platform.prefix });
      expect(await queue.count()).toBe(0);
      await queue.close();
    });

    it('serves a queued request once a late worker starts, then turns ready when every deployment has one', async () => {
      const pending = fetch(
        url('/v1/chat/completions'),
        json({ model: 'alpha', messages: hello }, `Bearer ${MAIN_KEY}`),
      );
      await new Promise((r) => setTimeout(r, 300));
      await platform.startWorker({}, ['--deployments', 'alpha']);
      const res = await pending;
      expect(res.status).toBe(200);
      expect((await readJson<ChatCompletion>(res)).usage.completion_tokens).toBe(5);

      expect((await get('/ready')).status).toBe(503);
      await platform.startWorker({}, ['--deployments', 'beta']);
      const ready = await get('/ready');
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({
        status: 'ready',
        deployments: { alpha: { live_workers: 1 }, beta: { live_workers: 1 } },
      });
    });
  });

  describe('OpenAI routes under /v1 (Bearer)', () => {
    it.each([
      ['no header', undefined, 401],
      ['a wrong key', 'Bearer sk-wrong', 401],
      ['the wrong prefix', `Key ${MAIN_KEY}`, 401],
      ['a bare key', MAIN_KEY, 401],
      ['the right key', `Bearer ${MAIN_KEY}`, 200],
      ['a lower-case scheme', `bearer ${MAIN_KEY}`, 200],
    ])('GET /v1/models with %s → %d', async (_name, authorization, status) => {
      const res = await get('/v1/models', authorization);
      expect(res.status).toBe(status);
      if (status === 401)
        expect((await readJson<OpenAiErrorBody>(res)).error).toMatchObject({
          type: 'authentication_error',
          code: 'invalid_api_key',
        });
    });

    it('marks live deployments as ready in the model list', async () => {
      const models = await readJson<ModelList>(await get('/v1/models', `Bearer ${MAIN_KEY}`));
      expect(models.data).toEqual([
        expect.objectContaining({ id: 'alpha', object: 'model', status: 'ready', live_workers: 1 }),
        expect.objectContaining({ id: 'beta', object: 'model', status: 'ready', live_workers: 1 }),
      ]);
    });

    it('keeps health routes public', async () => {
      expect((await get('/health')).status).toBe(200);
      expect((await get('/ready')).status).toBe(200);
    });
  });

  describe('hosted predict route (Api-Key)', () => {
    const predict = (body: object, authorization?: string) =>
      fetch(url('/environments/production/predict'), json(body, authorization));

    it('answers the chat body with a chat.completion for the right key', async () => {
      const res = await predict({ model: 'alpha', messages: hello, max_tokens: 3 }, `Api-Key ${MAIN_KEY}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        object: 'chat.completion',
        model: 'alpha',
        usage: { completion_tokens: 3 },
      });
    });

    it('streams SSE when stream is true', async () => {
      const res = await predict(
        { model: 'alpha', messages: hello, max_tokens: 3, stream: true },
        `Api-Key ${MAIN_KEY}`,
      );
      expect(res.status).toBe(200);
      const { payloads } = await readSse(res);
      expect(payloads.at(-1)).toBe('[DONE]');
      expect(JSON.parse(payloads[0]).object).toBe('chat.completion.chunk');
    });

    it('accepts a body sent without Content-Type, as the hosted calls do', async () => {
      const res = await fetch(url('/environments/production/predict'), {
        method: 'POST',
        headers: { authorization: `Api-Key ${MAIN_KEY}` },
        // Bytes, not a string: fetch would label a string text/plain, which is refused (415).
        body: Buffer.from(JSON.stringify({ model: 'alpha', messages: hello, max_tokens: 2 })),
      });
      expect(res.status).toBe(200);
    });

    it.each([
      ['no header', undefined],
      ['the Bearer prefix', `Bearer ${MAIN_KEY}`],
      ['no prefix', MAIN_KEY],
      ['a wrong key', 'Api-Key sk-nope'],
    ])('refuses %s with 401', async (_name, authorization) => {
      const res = await predict({ model: 'alpha', messages: hello, max_tokens: 2 }, authorization);
      expect(res.status).toBe(401);
      expect((await readJson<OpenAiErrorBody>(res)).error.type).toBe('authentication_error');
    });
  });

  describe('org/app routes (Key)', () => {
    it('serves a private app to the right key only, and only its own deployment', async () => {
      const list = await get('/acme/private-chat/v1/models', `Key ${MAIN_KEY}`);
      expect(list.status).toBe(200);
      expect((await readJson<ModelList>(list)).data.map((m) => m.id)).toEqual(['alpha']);
      for (const authorization of [undefined, `Bearer ${MAIN_KEY}`, `Api-Key ${MAIN_KEY}`, 'Key sk-nope']) {
        expect((await get('/acme/private-chat/v1/models', authorization)).status).toBe(401);
      }
      const chat = await fetch(
        url('/acme/private-chat/v1/chat/completions'),
        json({ model: 'alpha', messages: hello, max_tokens: 2 }, `Key ${MAIN_KEY}`),
      );
      expect(chat.status).toBe(200);
      const other = await fetch(
        url('/acme/private-chat/v1/chat/completions'),
        json({ model: 'beta', messages: hello, max_tokens: 2 }, `Key ${MAIN_KEY}`),
      );
      expect(other.status).toBe(404);
      expect((await readJson<OpenAiErrorBody>(other)).error.code).toBe('model_not_found');
    });

    it('serves a public app without credentials', async () => {
      expect((await get('/acme/open-chat/v1/models')).status).toBe(200);
      const chat = await fetch(
        url('/acme/open-chat/v1/chat/completions'),
        json({ model: 'beta', messages: hello, max_tokens: 2 }),
      );
      expect(chat.status).toBe(200);
      expect((await readJson<ChatCompletion>(chat)).model).toBe('beta');
    });

    it('answers an unknown app exactly as a private one without a valid key, so app names cannot be probed', async () => {
      const answer = async (res: Response) => ({ status: res.status, body: await readJson<OpenAiErrorBody>(res) });
      for (const authorization of [undefined, 'Key sk-nope', `Bearer ${MAIN_KEY}`]) {
        const unknown = await answer(await get('/acme/nothing/v1/models', authorization));
        const unknownOrg = await answer(
          await fetch(
            url('/nobody/nothing/v1/chat/completions'),
            json({ model: 'alpha', messages: hello }, authorization),
          ),
        );
        const private_ = await answer(await get('/acme/private-chat/v1/models', authorization));
        expect(private_.status).toBe(401);
        expect(unknown).toEqual(private_);
        expect(unknownOrg).toEqual(private_);
      }
    });

    it('answers an unknown app with 404 to a valid key', async () => {
      const res = await get('/acme/nothing/v1/models', `Key ${MAIN_KEY}`);
      expect(res.status).toBe(404);
      expect((await readJson<OpenAiErrorBody>(res)).error.code).toBe('app_not_found');
    });
  });

  it('rate-limits a key across requests, with Retry-After and x-ratelimit headers', async () => {
    const seen: Array<[number, string | null]> = [];
    for (let i = 0; i < 3; i++) {
      const res = await get('/v1/models', `Bearer ${LIMITED_KEY}`);
      seen.push([res.status, res.headers.get('x-ratelimit-remaining-requests')]);
      expect(res.headers.get('x-ratelimit-limit-requests')).toBe('3');
    }
    expect(seen).toEqual([
      [200, '2'],
      [200, '1'],
      [200, '0'],
    ]);
    const over = await get('/v1/models', `Bearer ${LIMITED_KEY}`);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(over.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$/);
    expect((await readJson<OpenAiErrorBody>(over)).error).toMatchObject({
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
    });
    // Another key has its own budget.
    expect((await get('/v1/models', `Bearer ${MAIN_KEY}`)).status).toBe(200);
  });

  it("keeps each key's replies to itself: another key resuming a stream gets the 404 of an unknown id", async () => {
    const streamed = await fetch(
      url('/v1/chat/completions'),
      json({ model: 'alpha', messages: hello, max_tokens: 4, stream: true }, `Bearer ${MAIN_KEY}`),
    );
    expect(streamed.status).toBe(200);
    const { payloads } = await readSse(streamed);
    const id = (JSON.parse(payloads[0]) as { id: string }).id;
    const unknownId = 'chatcmpl-00000000-0000-4000-8000-000000000000';
    const resume = (completionId: string, authorization: string) =>
      get(`/v1/chat/completions/${completionId}/stream`, authorization);

    const stolen = await resume(id, `Bearer ${OTHER_KEY}`);
    const unknown = await resume(unknownId, `Bearer ${OTHER_KEY}`);
    expect(stolen.status).toBe(404);
    expect(unknown.status).toBe(404);
    const [stolenError, unknownError] = [
      (await readJson<OpenAiErrorBody>(stolen)).error,
      (await readJson<OpenAiErrorBody>(unknown)).error,
    ];
    expect({ ...stolenError, message: stolenError.message.replace(id, '<id>') }).toEqual({
      ...unknownError,
      message: unknownError.message.replace(unknownId, '<id>'),
    });

    // The key that made it still resumes it, from the first chunk.
    const own = await resume(id, `Bearer ${MAIN_KEY}`);
    expect(own.status).toBe(200);
    expect((await readSse(own)).payloads).toEqual(payloads);
  });

  it("keeps each key's files and batches to itself: another key gets 404, a malformed id 400", async () => {
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append(
      'file',
      new Blob([
        JSON.stringify({
          custom_id: 'x',
          method: 'POST',
          url: '/v1/chat/completions',
          body: { model: 'alpha', messages: hello },
        }) + '\n',
      ]),
      'in.jsonl',
    );
    const upload = await fetch(url('/v1/files'), {
      method: 'POST',
      headers: { authorization: `Bearer ${MAIN_KEY}` },
      body: form,
    });
    expect(upload.status).toBe(200);
    const file = await readJson<FileObject>(upload);
    const batch = await readJson<Batch>(
      await fetch(
        url('/v1/batches'),
        json(
          { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' },
          `Bearer ${MAIN_KEY}`,
        ),
      ),
    );
    expect(batch.id).toMatch(/^batch_/);

    const other = `Bearer ${OTHER_KEY}`;
    for (const path of [`/v1/files/${file.id}`, `/v1/files/${file.id}/content`, `/v1/batches/${batch.id}`]) {
      const res = await get(path, other);
      expect(res.status).toBe(404);
      expect((await readJson<OpenAiErrorBody>(res)).error.type).toBe('not_found_error');
      expect((await get(path, `Bearer ${MAIN_KEY}`)).status).toBe(200);
    }
    expect(
      (await fetch(url(`/v1/batches/${batch.id}/cancel`), { method: 'POST', headers: { authorization: other } }))
        .status,
    ).toBe(404);
    expect(
      (await fetch(url(`/v1/files/${file.id}`), { method: 'DELETE', headers: { authorization: other } })).status,
    ).toBe(404);
    expect((await readJson<ListPage<FileObject>>(await get('/v1/files', other))).data).toEqual([]);
    expect((await readJson<ListPage<Batch>>(await get('/v1/batches', other))).data).toEqual([]);
    expect((await get('/v1/files/file-..%2F..%2Fsecrets', other)).status).toBe(400);
    expect((await get('/v1/batches/batch_..%2Fx', other)).status).toBe(400);
  });

  it("applies a deployment's presets to unset fields, and the request's own values win", async () => {
    const ask = async (extra: object) => {
      const res = await fetch(
        url('/v1/chat/completions'),
        json({ model: 'alpha', messages: hello, ...extra }, `Bearer ${MAIN_KEY}`),
      );
      expect(res.status).toBe(200);
      return readJson<ChatCompletion>(res);
    };
    const a = await ask({});
    const b = await ask({ temperature: null, max_tokens: null });
    expect(a.usage.completion_tokens).toBe(5);
    // Preset temperature 0 is greedy: the same request gives the same text.
    expect(b.choices[0].message.content).toBe(a.choices[0].message.content);
    expect((await ask({ max_tokens: 2 })).usage.completion_tokens).toBe(2);
    const sampled = await Promise.all([1, 2, 3].map((seed) => ask({ temperature: 1.5, seed, max_tokens: 5 })));
    expect(sampled.some((r) => r.choices[0].message.content !== a.choices[0].message.content)).toBe(true);
  });

  it('routes each deployment to its own worker and keeps keys out of Redis and logs', async () => {
    const logs = [platform.api!, ...platform.workers].flatMap((p) => p.output).join('');
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(MAIN_KEY);
    expect(logs).not.toContain(LIMITED_KEY);
    const prefix = platform.prefix;
    const owners = async (id: string) => {
      const queue = new Queue(deploymentQueueName(id), { connection: { url: REDIS_URL }, prefix });
      const jobs = await queue.getCompleted();
      await queue.close();
      return new Set(jobs.map((j) => j.processedBy));
    };
    const [alphaOwners, betaOwners] = await Promise.all([owners('alpha'), owners('beta')]);
    expect(alphaOwners.size).toBe(1);
    expect(betaOwners.size).toBe(1);
    expect([...alphaOwners][0]).not.toBe([...betaOwners][0]);

    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${prefix}:*`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        const type = await redis.type(key);
        const dump =
          type === 'hash'
            ? JSON.stringify(await redis.hgetall(key))
            : type === 'string'
              ? String(await redis.get(key))
              : '';
        expect(dump).not.toContain(MAIN_KEY);
        expect(dump).not.toContain(LIMITED_KEY);
      }
    } finally {
      redis.disconnect();
    }
  });
});
