import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionChunk } from '@conveyor/openai';
import { chatLine, fileLines, jsonl, submitBatch, waitForBatch } from './support/batches.js';
import { readJson } from './support/json.js';
import { TestPlatform } from './support/platform.js';
import { readSse } from './support/sse.js';

const MODEL = 'conveyor-tiny';
// Instructions long enough to span several of the worker's 256-token prefill chunks: exact reuse comes in whole chunks.
const INSTRUCTIONS = 'You sort support tickets into billing, bugs or other, and answer with one word. '.repeat(30);
const CHUNK = 256;

const ask = (item: string) => [
  { role: 'system' as const, content: INSTRUCTIONS },
  { role: 'user' as const, content: `Ticket: ${item}` },
];

/** The value of one Prometheus sample on the API's /metrics, 0 when absent. */
async function metric(platform: TestPlatform, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${platform.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('prompt cache exact (PROMPT_CACHE=exact): replies, streams and batch lines report what the worker reused', () => {
  let platform: TestPlatform;
  let client: OpenAI;

  const chat = async (body: Record<string, unknown>) => {
    const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, temperature: 0, max_tokens: 6, ...body }),
    });
    expect(res.status).toBe(200);
    return res;
  };

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { PROMPT_CACHE: 'exact' } });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'any-key-works' });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('a second request sharing the instructions reuses them: cached_tokens in whole chunks, and counted', async () => {
    const cachedBefore = await metric(platform, 'conveyor_prompt_tokens_total', 'source="cached"');
    const first = await readJson<ChatCompletion>(await chat({ messages: ask('my card was charged twice') }));
    const second = await readJson<ChatCompletion>(await chat({ messages: ask('the app crashes on start') }));
    const reused = second.usage.prompt_tokens_details?.cached_tokens ?? -1;
    expect(first.usage.prompt_tokens_details?.cached_tokens).toBe(0);
    expect(reused).toBeGreaterThanOrEqual(first.usage.prompt_tokens - 2 * CHUNK);
    expect(reused % CHUNK).toBe(0);
    expect(reused).toBeLessThan(second.usage.prompt_tokens);
    // The counters split every prompt token into computed and reused.
    expect(await metric(platform, 'conveyor_prompt_tokens_total', 'source="cached"')).toBe(cachedBefore + reused);
    expect(await metric(platform, 'conveyor_prompt_tokens_total', 'source="computed"')).toBeGreaterThanOrEqual(
      first.usage.prompt_tokens + second.usage.prompt_tokens - reused,
    );
  });

  it("a conversation's next turn reuses the one before, streamed usage included", async () => {
    const history: Array<{ role: 'system' | 'user' | 'assistant'; content: string }> = ask('refund please');
    const turn1 = await readJson<ChatCompletion>(await chat({ messages: history }));
    history.push({ role: 'assistant', content: turn1.choices[0]!.message.content ?? '' });
    history.push({ role: 'user', content: 'And how long will it take?' });
    const { payloads } = await readSse(
      await chat({ messages: history, stream: true, stream_options: { include_usage: true } }),
    );
    const chunks = payloads.filter((e) => e !== '[DONE]').map((e) => JSON.parse(e) as ChatCompletionChunk);
    const usage = chunks.at(-1)!.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(turn1.usage.prompt_tokens);
    expect(usage.prompt_tokens_details?.cached_tokens).toBe(
      turn1.usage.prompt_tokens - (turn1.usage.prompt_tokens % CHUNK),
    );
  });

  it("a batch's lines sharing their instructions compute them about once per sequence, not once per line", async () => {
    const lines = ['late delivery', 'wrong invoice', 'login loop', 'feature idea', 'double charge', 'slow pages'];
    const batch = await submitBatch(
      client,
      jsonl(lines.map((item, i) => chatLine(`t${i}`, { messages: ask(item), max_tokens: 4 }))),
    );
    const done = await waitForBatch(client, batch.id);
    expect(done.request_counts).toMatchObject({ total: lines.length, completed: lines.length, failed: 0 });
    const output = await fileLines<ChatCompletion>(client, done.output_file_id);
    const reused = output.map((l) => l.response!.body.usage.prompt_tokens_details?.cached_tokens ?? -1);
    expect(reused.every((r) => r >= 0 && r % CHUNK === 0)).toBe(true);
    // Two sequences: at most the first line on each computes the instructions; every later one reuses them.
    const promptTokens = output[0]!.response!.body.usage.prompt_tokens;
    expect(reused.filter((r) => r >= promptTokens - 2 * CHUNK).length).toBeGreaterThanOrEqual(lines.length - 2);
  });
});

describe('prompt cache off (PROMPT_CACHE=false)', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { PROMPT_CACHE: 'false' } });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('every request computes its whole prompt, and says so', async () => {
    for (const item of ['one', 'two', 'three']) {
      const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: ask(item), temperature: 0, max_tokens: 4 }),
      });
      const body = await readJson<ChatCompletion>(res);
      expect(body.usage.prompt_tokens).toBeGreaterThan(3 * CHUNK);
      expect(body.usage.prompt_tokens_details).toEqual({ cached_tokens: 0 });
    }
    expect(await metric(platform, 'conveyor_prompt_tokens_total', 'source="cached"')).toBe(0);
  });
});

describe('prompt cache full, the default (PROMPT_CACHE unset)', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await TestPlatform.start();
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it("a conversation's next turn reuses the whole turn before, its reply included", async () => {
    const post = async (messages: Array<{ role: string; content: string }>) => {
      const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages, temperature: 0, max_tokens: 6 }),
      });
      return readJson<ChatCompletion>(res);
    };
    const history: Array<{ role: string; content: string }> = ask('refund please');
    const turn1 = await post(history);
    history.push({ role: 'assistant', content: turn1.choices[0]!.message.content ?? '' });
    history.push({ role: 'user', content: 'And how long will it take?' });
    const turn2 = await post(history);
    expect(turn2.usage.prompt_tokens_details?.cached_tokens).toBeGreaterThanOrEqual(turn1.usage.prompt_tokens);
    expect(turn2.usage.prompt_tokens_details?.cached_tokens).toBeLessThan(turn2.usage.prompt_tokens);
  });
});
