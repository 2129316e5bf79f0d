import { rmSync } from 'node:fs';
import OpenAI, { toFile } from 'openai';
import type { OpenAiErrorBody } from '@conveyor/openai';
import { fileLines, waitForBatch } from './support/batches.js';
import { readJson } from './support/json.js';
import { TestPlatform } from './support/platform.js';
import { readSse } from './support/sse.js';

const MODEL = 'conveyor-tiny';
const PROMPT = 'Once upon a time, the queue';
const DATA_DIR = `/tmp/conveyor-test-completions-${process.pid}`;

/** vLLM / llama.cpp extras the openai client's types do not list; it sends them as they are. */
type Extras = { ignore_eos?: boolean };
type Params = OpenAI.CompletionCreateParamsNonStreaming & Extras;

describe('legacy completions end to end (POST /v1/completions)', () => {
  let platform: TestPlatform;
  let client: OpenAI;

  const create = (params: Partial<Params> = {}) =>
    client.completions.create({
      model: MODEL,
      prompt: PROMPT,
      max_tokens: 8,
      temperature: 0,
      ignore_eos: true,
      ...params,
    } as Params);
  const post = (body: Record<string, unknown>) =>
    fetch(`${platform.baseUrl}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt: PROMPT, ...body }),
    });

  beforeAll(async () => {
    // Four sequences: two prompts with n = 2 run as one job.
    // A test repeats a greedy completion for the same text: only the exact prompt cache promises that.
    platform = await TestPlatform.start({ env: { DATA_DIR, PARALLEL: '4', PROMPT_CACHE: 'exact' } });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'any-key-works' });
  });

  afterAll(async () => {
    await platform?.stop();
    rmSync(DATA_DIR, { recursive: true, force: true });
  });

  it('answers a sync request with a text_completion, its usage, and finish_reason "length"', async () => {
    const completion = await create();
    expect(completion).toMatchObject({
      id: expect.stringMatching(/^cmpl-[0-9a-f-]{36}$/),
      object: 'text_completion',
      created: expect.any(Number),
      model: MODEL,
      system_fingerprint: null,
      choices: [{ index: 0, text: expect.any(String), logprobs: null, finish_reason: 'length' }],
    });
    expect(completion.choices[0].text.length).toBeGreaterThan(0);
    const { prompt_tokens, completion_tokens, total_tokens } = completion.usage!;
    expect(prompt_tokens).toBeGreaterThan(0);
    expect(completion_tokens).toBe(8);
    expect(total_tokens).toBe(prompt_tokens + completion_tokens);
  });

  it('repeats a greedy completion exactly, and streams the same text', async () => {
    const request = { max_tokens: 24, seed: 7 };
    const first = await create(request);
    expect((await create(request)).choices[0].text).toBe(first.choices[0].text);

    const stream = await client.completions.create({
      model: MODEL,
      prompt: PROMPT,
      temperature: 0,
      ignore_eos: true,
      ...request,
      stream: true,
    } as OpenAI.CompletionCreateParamsStreaming);
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('text_completion');
      text += chunk.choices[0]?.text ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(first.choices[0].text);
    expect(finish).toBe('length');
  });

  it('streams OpenAI SSE framing: text chunks, a final chunk, the usage chunk when asked, then [DONE]', async () => {
    const res = await post({
      max_tokens: 5,
      temperature: 0,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { payloads } = await readSse(res);
    expect(payloads.at(-1)).toBe('[DONE]');
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p) as OpenAI.Completion);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    for (const c of chunks) expect(c.object).toBe('text_completion');
    const usage = chunks.at(-1)!;
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toMatchObject({ completion_tokens: 5 });
    expect(chunks.at(-2)!.choices).toEqual([{ text: '', index: 0, logprobs: null, finish_reason: 'length' }]);
    const middle = chunks.slice(0, -2);
    expect(middle.length).toBeGreaterThan(0);
    for (const c of middle) {
      expect(c.usage).toBeNull();
      expect(c.choices[0].finish_reason).toBeNull();
    }
  });

  it("gives n choices per prompt, choice p * n + i being prompt p's", async () => {
    const two = await create({ n: 2, temperature: 1, seed: 3, max_tokens: 4 });
    expect(two.choices.map((c) => c.index)).toEqual([0, 1]);

    const prompts = ['Alpha says', 'Beta says'];
    const four = await create({ prompt: prompts, n: 2, max_tokens: 4, echo: true });
    expect(four.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    four.choices.forEach((c) => {
      expect(c.text.startsWith(prompts[Math.floor(c.index / 2)])).toBe(true);
      expect(c.finish_reason).toBe('length');
    });
    expect(four.usage!.completion_tokens).toBeGreaterThanOrEqual(4);
  });

  it('reports legacy logprobs: parallel lists, at most logprobs alternatives per token', async () => {
    const completion = await create({ logprobs: 2, max_tokens: 6 });
    const lp = completion.choices[0].logprobs!;
    expect(lp).toEqual({
      tokens: expect.any(Array),
      token_logprobs: expect.any(Array),
      top_logprobs: expect.any(Array),
      text_offset: expect.any(Array),
    });
    expect(lp.tokens!.length).toBe(6);
    for (const list of [lp.token_logprobs, lp.top_logprobs, lp.text_offset]) expect(list!.length).toBe(6);
    for (const l of lp.token_logprobs!) expect(l).toBeLessThanOrEqual(0);
    for (const top of lp.top_logprobs!) {
      expect(Object.keys(top).length).toBeLessThanOrEqual(2);
      for (const l of Object.values(top)) expect(l).toBeLessThanOrEqual(0);
    }
    expect(lp.text_offset![0]).toBe(0);
    lp.text_offset!.forEach((o, i) => i && expect(o).toBeGreaterThanOrEqual(lp.text_offset![i - 1]));

    // Streamed, the same lists arrive in pieces, offsets still counted from the start of the text.
    const stream = await client.completions.create({
      model: MODEL,
      prompt: PROMPT,
      max_tokens: 6,
      temperature: 0,
      ignore_eos: true,
      logprobs: 2,
      stream: true,
    } as OpenAI.CompletionCreateParamsStreaming);
    const streamed = { tokens: [] as string[], token_logprobs: [] as number[], text_offset: [] as number[] };
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.logprobs;
      if (!piece) continue;
      streamed.tokens.push(...piece.tokens!);
      streamed.token_logprobs.push(...piece.token_logprobs!);
      streamed.text_offset.push(...piece.text_offset!);
    }
    expect(streamed.tokens).toEqual(lp.tokens);
    expect(streamed.text_offset).toEqual(lp.text_offset);
    streamed.token_logprobs.forEach((l, i) => expect(l).toBeCloseTo(lp.token_logprobs![i], 4));
  });

  it('prepends the prompt with echo', async () => {
    const plain = await create({ max_tokens: 6 });
    const echoed = await create({ max_tokens: 6, echo: true });
    expect(echoed.choices[0].text).toBe(PROMPT + plain.choices[0].text);
  });

  it('refuses what it cannot honour with a 400 naming the field, queueing nothing', async () => {
    await expect(create({ suffix: 'The end.' })).rejects.toMatchObject({
      status: 400,
      param: 'suffix',
      code: 'unsupported_parameter',
    });
    await expect(create({ prompt: [1, 2, 3] })).rejects.toMatchObject({
      status: 400,
      param: 'prompt',
      code: 'unsupported_parameter',
    });
    await expect(create({ max_tokens: 100_000 })).rejects.toMatchObject({
      status: 400,
      param: 'max_tokens',
      code: 'context_length_exceeded',
    });
    await expect(create({ echo: true, logprobs: 1 })).rejects.toMatchObject({ status: 400, param: 'echo' });
    await expect(create({ best_of: 3 })).rejects.toMatchObject({ status: 400, param: 'best_of' });
    await expect(create({ prompt: ['a', 'b', 'c'], n: 2 })).rejects.toMatchObject({
      status: 400,
      param: 'n',
      code: 'invalid_value',
    });
    const res = await post({ logprobs: 6 });
    expect(res.status).toBe(400);
    expect((await readJson<OpenAiErrorBody>(res)).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'logprobs',
    });
  });

  it('generates from the beginning-of-sequence token for an empty prompt, as OpenAI does, also in a batch line', async () => {
    const completion = await create({ prompt: '', max_tokens: 4 });
    expect(completion.choices[0]).toMatchObject({ index: 0, finish_reason: 'length' });
    expect(completion.choices[0].text.length).toBeGreaterThan(0);
    // The prompt is BOS alone.
    expect(completion.usage).toMatchObject({ prompt_tokens: 1, completion_tokens: 4 });

    const line = {
      custom_id: 'empty',
      method: 'POST',
      url: '/v1/completions',
      body: { model: MODEL, prompt: '', max_tokens: 3, temperature: 0, ignore_eos: true },
    };
    const file = await client.files.create({
      file: await toFile(Buffer.from(JSON.stringify(line) + '\n'), 'empty-prompt.jsonl'),
      purpose: 'batch',
    });
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/completions',
      completion_window: '24h',
    });
    const batch = await waitForBatch(client, created.id, undefined, 30_000);
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 1, completed: 1, failed: 0 } });
    const [out] = await fileLines<OpenAI.Completion>(client, batch.output_file_id);
    expect(out.response).toMatchObject({
      status_code: 200,
      body: { object: 'text_completion', usage: { prompt_tokens: 1, completion_tokens: 3 } },
    });
    expect(out.response!.body.choices[0].text.length).toBeGreaterThan(0);
  });

  it('runs a batch over /v1/completions to text_completion bodies', async () => {
    const ids = ['c-1', 'c-2', 'c-3'];
    const lines = ids.map((id) =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/completions',
        body: { model: MODEL, prompt: `Line ${id}`, max_tokens: 3, temperature: 0, ignore_eos: true },
      }),
    );
    const file = await client.files.create({
      file: await toFile(Buffer.from(lines.join('\n') + '\n'), 'input.jsonl'),
      purpose: 'batch',
    });
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/completions',
      completion_window: '24h',
    });
    const batch = await waitForBatch(client, created.id, undefined, 30_000);
    expect(batch).toMatchObject({
      status: 'completed',
      endpoint: '/v1/completions',
      request_counts: { total: 3, completed: 3, failed: 0 },
    });
    const out = await fileLines(client, batch.output_file_id);
    expect(out.map((l) => l.custom_id).sort()).toEqual(ids);
    for (const line of out) {
      expect(line.response).toMatchObject({
        status_code: 200,
        body: {
          id: expect.stringMatching(/^cmpl-/),
          object: 'text_completion',
          model: MODEL,
          choices: [{ index: 0, finish_reason: 'length' }],
          usage: { completion_tokens: 3 },
        },
      });
    }
  });
});
