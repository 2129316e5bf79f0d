import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import type { ChatCompletion, Message, OpenAiErrorBody, ResponseObject } from '@conveyor/openai';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { readJson } from './support/json.js';
import { TestPlatform } from './support/platform.js';

const GOLD = 'sk-gold-key';
const BASIC = 'sk-basic-key';
const digest = (key: string) => createHash('sha256').update(key).digest('hex');
/** Places a flex request may find taken in the queue before it is refused. */
const FLEX_QUEUE_DEPTH = 6;

/** One worker with one sequence: every request after the first waits, and the queue's order decides who goes next. */
const config = writeDeploymentsFile({
  deployments: [
    {
      id: 'sim',
      engine: 'simulated',
      simulated: { ttftMs: 100, tpotMs: 25, outputTokens: 5, text: 'one two three four five' },
      parallel: 1,
      contextSize: 1024,
    },
    // For the order test: a request runs long enough that a loaded machine admits the next one well within it.
    {
      id: 'sim-slow',
      engine: 'simulated',
      simulated: { ttftMs: 1000, tpotMs: 25, outputTokens: 5, text: 'one two three four five' },
      parallel: 1,
      contextSize: 1024,
    },
  ],
  apiKeys: [
    { name: 'gold', sha256: digest(GOLD), tiers: ['auto', 'default', 'flex', 'priority'] },
    { name: 'basic', sha256: digest(BASIC) },
  ],
});

const post = (baseUrl: string, key: string, path: string, body: object) =>
  fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'sim', ...body }),
  });
const SLOW = { model: 'sim-slow' };
const chatBody = (tier?: string) => ({
  messages: [{ role: 'user', content: 'Sixteen bytes!!!' }],
  max_tokens: 5,
  ...(tier ? { service_tier: tier } : {}),
});

describe('service tiers: bands of one queue', () => {
  let platform: TestPlatform;
  const chat = (key: string, tier?: string) => post(platform.baseUrl, key, '/v1/chat/completions', chatBody(tier));

  /** Requests of the deployment waiting in its queue, whatever their tier, as the scaling signal counts them. */
  const waiting = async (deployment: string): Promise<number> => {
    const res = await fetch(`${platform.baseUrl}/scaling/deployments/${deployment}`);
    return ((await res.json()) as { waiting: number }).waiting;
  };
  const untilWaiting = async (n: number, deployment = 'sim'): Promise<void> => {
    for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
      if ((await waiting(deployment)) >= n) return;
    }
    throw new Error(`the queue never held ${n} requests`);
  };
  /** Every reply, in the order they finish. */
  const finishing = (order: string[], name: string, reply: Promise<Response>) =>
    reply.then(async (res) => {
      order.push(name);
      return { name, status: res.status, body: await readJson<ChatCompletion>(res) };
    });

  beforeAll(async () => {
    platform = await TestPlatform.start({
      env: { CONVEYOR_CONFIG: config, FLEX_QUEUE_DEPTH: String(FLEX_QUEUE_DEPTH) },
    });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('serves priority ahead of the default requests already waiting, and flex after all of them', async () => {
    const order: string[] = [];
    const slowChat = (tier: string) =>
      post(platform.baseUrl, GOLD, '/v1/chat/completions', { ...chatBody(tier), ...SLOW });
    const defaults = Array.from({ length: 5 }, (_, i) => finishing(order, `default-${i}`, slowChat('default')));
    // One runs, four wait (counted as waiting by the scaling signal, though BullMQ prioritizes them).
    await untilWaiting(4, 'sim-slow');
    const doneBefore = order.length;
    const flex = finishing(order, 'flex', slowChat('flex'));
    const priority = finishing(order, 'priority', slowChat('priority'));
    const replies = await Promise.all([...defaults, flex, priority]);
    for (const reply of replies) expect(reply.status).toBe(200);
    expect(Object.fromEntries(replies.map((r) => [r.name, r.body.service_tier]))).toMatchObject({
      priority: 'priority',
      flex: 'flex',
      'default-0': 'default',
    });
    // Priority waited for the one request running when it came, at most: every other default came after it.
    expect(order.indexOf('priority')).toBeLessThanOrEqual(doneBefore + 1);
    // Flex was queued before priority, and still came last.
    expect(order.at(-1)).toBe('flex');

    // The queue time by tier says so too.
    const metrics = await (await fetch(`${platform.baseUrl}/metrics`)).text();
    const sum = (tier: string) =>
      Number(
        new RegExp(`conveyor_queue_wait_seconds_sum\\{deployment="sim-slow",tier="${tier}"\\} (\\S+)`).exec(
          metrics,
        )?.[1],
      );
    const count = (tier: string) =>
      Number(
        new RegExp(`conveyor_queue_wait_seconds_count\\{deployment="sim-slow",tier="${tier}"\\} (\\S+)`).exec(
          metrics,
        )?.[1],
      );
    expect(count('priority')).toBe(1);
    expect(count('flex')).toBe(1);
    expect(count('default')).toBe(5);
    expect(sum('priority')).toBeLessThan(sum('flex'));
    expect(sum('priority')).toBeLessThan(sum('default') / count('default'));
  });

  it('refuses flex with 429 once the queue is FLEX_QUEUE_DEPTH deep, while default is still admitted', async () => {
    const defaults = Array.from({ length: FLEX_QUEUE_DEPTH + 2 }, () => chat(GOLD));
    await untilWaiting(FLEX_QUEUE_DEPTH);
    const refused = await chat(GOLD, 'flex');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    const { error } = await readJson<OpenAiErrorBody>(refused);
    expect(error).toMatchObject({ type: 'rate_limit_error', code: 'resource_unavailable', param: 'service_tier' });
    expect(error.message).toMatch(/too deep for flex/);
    const admitted = await chat(GOLD, 'default');
    expect(admitted.status).toBe(200);
    for (const res of await Promise.all(defaults)) expect(res.status).toBe(200);
  });

  it('serves a key without priority among its tiers at default, and says so, on every API', async () => {
    const asked = await chat(BASIC, 'priority');
    expect(asked.status).toBe(200);
    expect((await readJson<ChatCompletion>(asked)).service_tier).toBe('default');

    const response = await post(platform.baseUrl, BASIC, '/v1/responses', { input: 'hi', service_tier: 'priority' });
    expect(response.status).toBe(200);
    expect((await readJson<ResponseObject>(response)).service_tier).toBe('default');
    const gold = await post(platform.baseUrl, GOLD, '/v1/responses', { input: 'hi', service_tier: 'priority' });
    expect((await readJson<ResponseObject>(gold)).service_tier).toBe('priority');

    // Anthropic's `auto` (its default) uses priority where the key has it; `standard_only` never does.
    const message = (key: string, tier?: string) =>
      post(platform.baseUrl, key, '/v1/messages', {
        max_tokens: 5,
        messages: [{ role: 'user', content: 'hi' }],
        ...(tier ? { service_tier: tier } : {}),
      }).then((res) => readJson<Message>(res));
    expect((await message(BASIC)).usage.service_tier).toBe('standard');
    expect((await message(GOLD)).usage.service_tier).toBe('priority');
    expect((await message(GOLD, 'standard_only')).usage.service_tier).toBe('standard');
  });

  it('answers a tier it does not know with a 400 in the API’s own shape', async () => {
    const res = await chat(GOLD, 'platinum');
    expect(res.status).toBe(400);
    expect((await readJson<OpenAiErrorBody>(res)).error.param).toBe('service_tier');
    const anthropic = await post(platform.baseUrl, GOLD, '/v1/messages', {
      max_tokens: 5,
      messages: [{ role: 'user', content: 'hi' }],
      service_tier: 'priority',
    });
    expect(anthropic.status).toBe(400);
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it("echoes the official OpenAI SDK's service_tier, in a reply and in every chunk of a stream", async () => {
    const client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: GOLD, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'sim',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 3,
      service_tier: 'priority',
    });
    expect(completion.service_tier).toBe('priority');
    const stream = await client.chat.completions.create({
      model: 'sim',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 3,
      service_tier: 'flex',
      stream: true,
    });
    const tiers = new Set<string | null | undefined>();
    for await (const chunk of stream) tiers.add(chunk.service_tier);
    expect([...tiers]).toEqual(['flex']);
  });
});
