import type { ChatCompletion, ChatCompletionChunk } from '@conveyor/openai';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { TestPlatform } from './support/platform.js';

const TTFT_MS = 300;
const TPOT_MS = 50;

/** A deployment that loads no model: replies at a known pace, the text repeated word by word. */
const config = writeDeploymentsFile({
  deployments: [
    {
      id: 'sim',
      engine: 'simulated',
      simulated: { ttftMs: TTFT_MS, tpotMs: TPOT_MS, outputTokens: 12, text: 'alpha beta gamma delta' },
      parallel: 4,
      contextSize: 1024,
    },
  ],
});

const chat = (body: object) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'sim', messages: [{ role: 'user', content: 'Sixteen bytes!!!' }], ...body }),
});

describe('a platform on a simulated deployment', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config } });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('answers a chat with the configured text, length and pace', async () => {
    const started = performance.now();
    const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, chat({ max_tokens: 10 }));
    const ms = performance.now() - started;
    expect(res.status).toBe(200);
    const body = (await res.json()) as ChatCompletion;
    expect(body.choices[0]!.message.content).toBe('alpha beta gamma delta alpha beta gamma delta alpha beta');
    expect(body.choices[0]!.finish_reason).toBe('length');
    // 16 bytes of prompt are 4 tokens; the reply's 10 tokens, exactly.
    expect(body.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 10 });
    // First token after 300 ms, then 9 more 50 ms apart: 750 ms at least. Only the floor is asserted: a
    // loaded machine is late by any amount, and how close to plan the pace keeps is for bench/ to measure.
    expect(ms).toBeGreaterThanOrEqual(TTFT_MS + 9 * TPOT_MS - 20);
  });

  it('streams the tokens at the configured pace, first after the time to first token', async () => {
    const started = performance.now();
    const res = await fetch(
      `${platform.baseUrl}/v1/chat/completions`,
      chat({ max_tokens: 8, stream: true, stream_options: { include_usage: true } }),
    );
    expect(res.status).toBe(200);
    const content: Array<{ at: number; text: string }> = [];
    const chunks: ChatCompletionChunk[] = [];
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
      const at = performance.now() - started;
      buffered += decoder.decode(bytes, { stream: true });
      const events = buffered.split('\n\n');
      buffered = events.pop()!;
      for (const event of events) {
        const data = event
          .split('\n')
          .find((l) => l.startsWith('data: '))
          ?.slice(6);
        if (!data || data === '[DONE]') continue;
        const chunk = JSON.parse(data) as ChatCompletionChunk;
        chunks.push(chunk);
        const text = chunk.choices[0]?.delta.content;
        if (text) content.push({ at, text });
      }
    }
    expect(content.map((c) => c.text).join('')).toBe('alpha beta gamma delta alpha beta gamma delta');
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 8 });
    expect(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe('length');
    // The first text no sooner than the time to first token; the last some 7 rounds later.
    expect(content[0]!.at).toBeGreaterThanOrEqual(TTFT_MS - 20);
    expect(content.at(-1)!.at - content[0]!.at).toBeGreaterThanOrEqual(0.5 * 7 * TPOT_MS);
  });

  it('ends a reply by itself after outputTokens when no max_tokens is set', async () => {
    const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, chat({ stop: ['delta'] }));
    const body = (await res.json()) as ChatCompletion;
    expect(body.choices[0]!.message.content).toBe('alpha beta gamma ');
    expect(body.choices[0]!.finish_reason).toBe('stop');
    const whole = (await (await fetch(`${platform.baseUrl}/v1/chat/completions`, chat({}))).json()) as ChatCompletion;
    expect(whole.usage!.completion_tokens).toBe(12);
    expect(whole.choices[0]!.finish_reason).toBe('stop');
  });
});
