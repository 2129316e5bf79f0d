import OpenAI from 'openai';
import { Redis } from 'ioredis';
import { hashKey } from '@conveyor/config';
import type { ChatCompletion, OpenAiErrorBody } from '@conveyor/openai';
import { tokenWindowKey } from '@conveyor/queue';
import { chatLine, jsonl, submitBatch, waitForBatch } from './support/batches.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';
import { EVENTUALLY_MS } from './support/jobs.js';

const TPM_KEY = 'sk-tpm-0123456789';
const SHARED_KEY = 'sk-shared-0123456789';
const BATCHY_KEY = 'sk-batchy-0123456789';
const DAILY_KEY = 'sk-daily-0123456789';
const CLAUDE_KEY = 'sk-claude-0123456789';
const TPM = 200;

/**
 * A simulated deployment (no model: replies of a known text at a known pace), and keys with small token
 * quotas: `tpm`, `shared` and `claude` by the minute, `batchy` by the minute far below its batch, `daily` by the day.
 */
const config = writeDeploymentsFile({
  deployments: [
    {
      id: 'sim',
      engine: 'simulated',
      simulated: { ttftMs: 500, tpotMs: 20, outputTokens: 12, text: 'alpha beta gamma delta' },
      parallel: 8,
      contextSize: 1024,
    },
  ],
  apiKeys: [
    { name: 'tpm', sha256: hashKey(TPM_KEY), tokenLimit: { perMinute: TPM } },
    { name: 'shared', sha256: hashKey(SHARED_KEY), tokenLimit: { perMinute: TPM } },
    { name: 'batchy', sha256: hashKey(BATCHY_KEY), tokenLimit: { perMinute: 60, perDay: 100_000 } },
    { name: 'daily', sha256: hashKey(DAILY_KEY), tokenLimit: { perDay: 100 } },
    { name: 'claude', sha256: hashKey(CLAUDE_KEY), tokenLimit: { perMinute: TPM } },
  ],
});

/** 'Sixteen bytes!!!': 4 tokens by the estimate's 4 bytes a token, 4 more for its turn; then max_tokens. */
const PROMPT = [{ role: 'user', content: 'Sixteen bytes!!!' }];
const estimate = (maxTokens: number) => 4 + 4 + maxTokens;

describe('token quotas per key', () => {
  let platform: TestPlatform;
  let redis: Redis;
  const chat = (key: string, body: object, baseUrl = platform.baseUrl) =>
    fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'sim', messages: PROMPT, ...body }),
    });
  const tokenHeaders = (res: Response) => ({
    limit: res.headers.get('x-ratelimit-limit-tokens'),
    remaining: Number(res.headers.get('x-ratelimit-remaining-tokens')),
    reset: res.headers.get('x-ratelimit-reset-tokens'),
  });
  /** What the key's minute window counts now, as every replica reads it. */
  const minuteCount = async (keyName: string) =>
    Number((await redis.get(tokenWindowKey(platform.prefix, keyName, 'minute', Math.floor(Date.now() / 60_000)))) ?? 0);
  const queuedLines = () => platform.api!.output.join('').split('"request queued"').length - 1;
  /** Exact counts need one minute window throughout: a step that starts near a minute's end waits for the next. */
  const awayFromMinuteEnd = async () => {
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 20_000) await new Promise((r) => setTimeout(r, left + 100));
  };
  const until = async (check: () => Promise<boolean>, timeoutMs = EVENTUALLY_MS) => {
    for (const end = Date.now() + timeoutMs; !(await check()); await new Promise((r) => setTimeout(r, 20))) {
      if (Date.now() > end) throw new Error('not within the time allowed');
    }
  };

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config, BATCH_TICK_MS: '100' } });
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    redis?.disconnect();
    await platform?.stop();
  });

  it("sends the token headers, and the remaining count falls by a reply's real usage once it ends", async () => {
    await awayFromMinuteEnd();
    // A stop string ends the reply after two words: far less than its max_tokens of 50.
    const first = await chat(TPM_KEY, { max_tokens: 50, stop: ['gamma'] });
    expect(first.status).toBe(200);
    expect(tokenHeaders(first)).toEqual({
      limit: String(TPM),
      remaining: TPM - estimate(50),
      reset: expect.stringMatching(/^\d+s$/),
    });
    const { usage } = (await first.json()) as ChatCompletion;
    const used = usage!.prompt_tokens + usage!.completion_tokens;
    expect(used).toBeLessThan(estimate(50));
    await until(async () => (await minuteCount('tpm')) === used);
    // The first reservation was refunded down to its real usage: more remains than right after it was made.
    const second = await chat(TPM_KEY, { max_tokens: 50, stop: ['gamma'] });
    expect(tokenHeaders(second).remaining).toBe(TPM - used - estimate(50));
    expect(tokenHeaders(second).remaining).toBeGreaterThan(tokenHeaders(first).remaining - estimate(50));
    await second.json();
  });

  it('refuses a request the minute has no room for with a 429 and the token headers, queueing nothing', async () => {
    await awayFromMinuteEnd();
    await until(async () => (await minuteCount('tpm')) < 30);
    const before = await minuteCount('tpm');
    const queued = queuedLines();
    // Four at once, each reserving 58 while it runs (a second or so): three fit in 200, the fourth does not.
    const replies = await Promise.all(Array.from({ length: 4 }, () => chat(TPM_KEY, { max_tokens: 50 })));
    const refused = replies.filter((r) => r.status === 429);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 429]);
    const [res] = refused;
    expect(res!.headers.get('x-request-id')).toBeNull();
    expect(tokenHeaders(res!)).toEqual({
      limit: String(TPM),
      remaining: TPM - before - 3 * estimate(50),
      reset: expect.stringMatching(/^\d+s$/),
    });
    expect(Number(res!.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await res!.json()) as OpenAiErrorBody;
    expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null });
    expect(body.error.message).toContain('tokens per min (TPM)');
    await Promise.all(replies.filter((r) => r.status === 200).map((r) => r.json()));
    expect(queuedLines()).toBe(queued + 3);
  });

  it("sends the headers on Anthropic's streamed replies too, and answers its refusal in Anthropic's shape", async () => {
    await awayFromMinuteEnd();
    const messages = (body: object) =>
      fetch(`${platform.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': CLAUDE_KEY, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'sim', messages: PROMPT, ...body }),
      });
    const streamed = await messages({ max_tokens: 5, stream: true });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toContain('text/event-stream');
    expect(tokenHeaders(streamed)).toMatchObject({ limit: String(TPM), remaining: TPM - estimate(5) });
    await streamed.text();
    // Too large for any minute: refused whatever the window holds.
    const res = await messages({ max_tokens: TPM });
    expect(res.status).toBe(429);
    expect(res.headers.get('x-ratelimit-limit-tokens')).toBe(String(TPM));
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(body.error.message).toContain('Request too large');
  });

  it("two API replicas count one key's tokens in the same windows", async () => {
    const other = await platform.startExtraApi();
    await awayFromMinuteEnd();
    // Four at once, two on each replica: apart, each would have room for its own two.
    const replies = await Promise.all(
      [platform.baseUrl, other.baseUrl, platform.baseUrl, other.baseUrl].map((url) =>
        chat(SHARED_KEY, { max_tokens: 50 }, url),
      ),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 429]);
    const remaining = replies.filter((r) => r.status === 200).map((r) => tokenHeaders(r).remaining);
    expect(remaining.sort((x, y) => y - x)).toEqual([1, 2, 3].map((n) => TPM - n * estimate(50)));
    await Promise.all(replies.map((r) => r.text()));
  });

  it('runs a batch larger than its key allows in a minute: its lines skip the per-minute check', async () => {
    const client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: BATCHY_KEY });
    // Six lines of 4 + 4 + 20 tokens: 168 estimated, against 60 a minute.
    const lines = Array.from({ length: 6 }, (_, i) =>
      chatLine(`line-${i}`, { model: 'sim', messages: PROMPT, max_tokens: 20 }),
    );
    const batch = await submitBatch(client, jsonl(lines));
    const done = await waitForBatch(client, batch.id);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toMatchObject({ total: 6, completed: 6, failed: 0 });
  });

  it("fails a batch whose estimate the key's day has no room for, naming the quota", async () => {
    const client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: DAILY_KEY });
    const lines = Array.from({ length: 6 }, (_, i) =>
      chatLine(`line-${i}`, { model: 'sim', messages: PROMPT, max_tokens: 20 }),
    );
    const batch = await submitBatch(client, jsonl(lines));
    const done = await waitForBatch(client, batch.id);
    expect(done.status).toBe('failed');
    expect(done.errors?.data).toEqual([expect.objectContaining({ code: 'token_limit_exceeded', line: null })]);
    expect(done.errors?.data?.[0]?.message).toContain('estimated 168 tokens');
    expect(done.output_file_id).toBeNull();
    expect(done.request_counts).toMatchObject({ completed: 0, failed: 0 });
  });
});
