import OpenAI from 'openai';
import { Queue } from 'bullmq';
import type { ChatCompletion, ModelList, OpenAiErrorBody } from '@conveyor/openai';
import { deploymentQueueName } from '@conveyor/queue';
import { readJson } from './support/json.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';
import { postOversized } from './support/post-oversized.js';
import { readSse } from './support/sse.js';
import { EVENTUALLY_MS } from './support/jobs.js';

const MODEL = 'conveyor-tiny';
const hello = [{ role: 'user' as const, content: 'Say hello to the queue.' }];

describe('chat completions end to end (API → BullMQ → worker → Redis → client)', () => {
  let platform: TestPlatform;
  let client: OpenAI;

  const post = (body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  const greedy = async (extra: Record<string, unknown> = {}) => {
    const res = await post({ model: MODEL, messages: hello, temperature: 0, max_tokens: 24, ...extra });
    expect(res.status).toBe(200);
    return readJson<ChatCompletion>(res);
  };

  beforeAll(async () => {
    // A test repeats a greedy request for the same text: only the exact prompt cache promises that.
    platform = await TestPlatform.start({ env: { PROMPT_CACHE: 'exact' } });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'any-key-works' });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('lists the deployed model in OpenAI list shape', async () => {
    const list = await client.models.list();
    expect(list.data).toEqual([
      {
        id: MODEL,
        object: 'model',
        created: expect.any(Number),
        owned_by: 'conveyor',
        status: 'ready',
        live_workers: 1,
      },
    ]);
    const raw = await readJson<ModelList>(await fetch(`${platform.baseUrl}/v1/models`));
    expect(raw.object).toBe('list');
  });

  it('answers a sync request with a complete chat.completion', async () => {
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: hello,
      max_tokens: 12,
      temperature: 0,
    });
    expect(completion).toMatchObject({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: expect.any(String) }, finish_reason: 'length' }],
    });
    expect(completion.choices[0].message.content!.length).toBeGreaterThan(0);
    const { prompt_tokens, completion_tokens, total_tokens } = completion.usage!;
    expect(prompt_tokens).toBeGreaterThan(5);
    expect(completion_tokens).toBe(12);
    expect(total_tokens).toBe(prompt_tokens + completion_tokens);
  });

  it('streams in exact OpenAI SSE framing, ending with [DONE]', async () => {
    const res = await post({ model: MODEL, messages: hello, temperature: 0, max_tokens: 10, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { payloads, ids } = await readSse(res);
    expect(payloads.at(-1)).toBe('[DONE]');
    // Every chunk is numbered for resumption (Last-Event-ID); [DONE] is not a chunk.
    expect(ids).toEqual([...payloads.slice(0, -1).map((_, i) => i), null]);
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p) as OpenAI.ChatCompletionChunk);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    for (const c of chunks) {
      expect(c.object).toBe('chat.completion.chunk');
      expect(c.model).toBe(MODEL);
      expect(c).not.toHaveProperty('usage');
    }
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    const last = chunks.at(-1)!;
    expect(last.choices[0]).toMatchObject({ delta: {}, finish_reason: 'length' });
    const middle = chunks.slice(1, -1);
    expect(middle.length).toBeGreaterThan(0);
    for (const c of middle) {
      expect(typeof c.choices[0].delta.content).toBe('string');
      expect(c.choices[0].finish_reason).toBeNull();
    }
  });

  it('adds a usage chunk with empty choices when stream_options.include_usage is set', async () => {
    const res = await post({
      model: MODEL,
      messages: hello,
      temperature: 0,
      max_tokens: 7,
      stream: true,
      stream_options: { include_usage: true },
    });
    const { payloads } = await readSse(res);
    expect(payloads.at(-1)).toBe('[DONE]');
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p) as OpenAI.ChatCompletionChunk);
    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toMatchObject({ completion_tokens: 7, total_tokens: usageChunk.usage!.prompt_tokens + 7 });
    for (const c of chunks.slice(0, -1)) expect(c.usage).toBeNull();
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('length');
  });

  it('streams exactly the text a sync request returns for the same greedy request', async () => {
    const request = { model: MODEL, messages: hello, temperature: 0, max_tokens: 40, seed: 7 };
    const sync = await client.chat.completions.create(request);
    const stream = await client.chat.completions.create({ ...request, stream: true });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(sync.choices[0].message.content);
    expect(finish).toBe(sync.choices[0].finish_reason);
  });

  it('honours max_tokens and max_completion_tokens exactly', async () => {
    const a = await greedy({ max_tokens: 5 });
    expect(a.choices[0].finish_reason).toBe('length');
    expect(a.usage!.completion_tokens).toBe(5);
    const b = await greedy({ max_tokens: null, max_completion_tokens: 3 });
    expect(b.usage!.completion_tokens).toBe(3);
  });

  it('stops at a stop string, excludes it, and reports finish_reason "stop"', async () => {
    const full = (await greedy({ max_tokens: 40 })).choices[0].message.content!;
    const stop = full.slice(10, 13);
    const cut = full.indexOf(stop);
    for (const s of [stop, [stop, 'never-generated-zzzz']]) {
      const res = await greedy({ max_tokens: 40, stop: s });
      expect(res.choices[0].finish_reason).toBe('stop');
      expect(res.choices[0].message.content).toBe(full.slice(0, cut));
    }
  });

  it('applies top_k, min_p, seed and both repetition-penalty spellings', async () => {
    const base = (await greedy({ max_tokens: 32 })).choices[0].message.content;
    // k = 1 and min_p = 1 each leave only the most likely token: sampling at temperature 1 becomes greedy.
    expect((await greedy({ temperature: 1, top_k: 1, max_tokens: 32, seed: 3 })).choices[0].message.content).toBe(base);
    expect((await greedy({ temperature: 1, min_p: 1, max_tokens: 32, seed: 4 })).choices[0].message.content).toBe(base);

    const a = (await greedy({ repetition_penalty: 1.5, max_tokens: 32 })).choices[0].message.content;
    const b = (await greedy({ repeat_penalty: 1.5, max_tokens: 32 })).choices[0].message.content;
    expect(a).toBe(b);
    expect(a).not.toBe(base);

    const seeded = async (seed: number) =>
      (await greedy({ temperature: 1, seed, max_tokens: 32 })).choices[0].message.content;
    expect(await seeded(11)).toBe(await seeded(11));
    const others = await Promise.all([12, 13, 14].map(seeded));
    expect(others.some((t) => t !== base)).toBe(true);
  });

  it('accepts null for every optional field and ignores unknown fields', async () => {
    const res = await post({
      model: MODEL,
      messages: [
        { role: 'system', content: 'You are terse.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'part one' },
            { type: 'text', text: 'part two' },
          ],
        },
      ],
      max_tokens: 4,
      temperature: null,
      top_p: null,
      top_k: null,
      min_p: null,
      stop: null,
      seed: null,
      stream: null,
      stream_options: null,
      presence_penalty: null,
      frequency_penalty: null,
      repetition_penalty: null,
      some_future_field: { nested: true },
    });
    expect(res.status).toBe(200);
    expect((await readJson<ChatCompletion>(res)).usage.completion_tokens).toBe(4);
  });

  describe('bad input: OpenAI-style errors, nothing enqueued', () => {
    let queue: Queue;
    const jobCount = async () => Object.values(await queue.getJobCounts()).reduce((a, b) => a + b, 0);

    beforeAll(() => {
      queue = new Queue(deploymentQueueName(MODEL), { connection: { url: REDIS_URL }, prefix: platform.prefix });
    });
    afterAll(async () => {
      await queue.close();
    });

    const cases: Array<[string, unknown, number, string | null, string | null]> = [
      ['malformed JSON', '{"model": "conveyor-tiny", "messages": [', 400, null, 'invalid_json'],
      ['a JSON array body', '[]', 400, null, null],
      ['missing model', { messages: hello }, 400, 'model', null],
      ['model of the wrong type', { model: 7, messages: hello }, 400, 'model', null],
      ['empty messages', { model: MODEL, messages: [] }, 400, 'messages', null],
      ['messages not an array', { model: MODEL, messages: 'hi' }, 400, 'messages', null],
      ['a bad role', { model: MODEL, messages: [{ role: 'wizard', content: 'x' }] }, 400, 'messages[0].role', null],
      [
        'content of the wrong type',
        { model: MODEL, messages: [{ role: 'user', content: 42 }] },
        400,
        'messages[0].content',
        null,
      ],
      [
        'a malformed content part',
        { model: MODEL, messages: [{ role: 'user', content: [{ type: 'text' }] }] },
        400,
        'messages[0].content',
        null,
      ],
      ['temperature out of range', { model: MODEL, messages: hello, temperature: 2.5 }, 400, 'temperature', null],
      ['top_p out of range', { model: MODEL, messages: hello, top_p: -0.1 }, 400, 'top_p', null],
      ['a fractional max_tokens', { model: MODEL, messages: hello, max_tokens: 1.5 }, 400, 'max_tokens', null],
      ['max_tokens of zero', { model: MODEL, messages: hello, max_tokens: 0 }, 400, 'max_tokens', null],
      ['a string top_k', { model: MODEL, messages: hello, top_k: '40' }, 400, 'top_k', null],
      ['stop of the wrong type', { model: MODEL, messages: hello, stop: 5 }, 400, 'stop', null],
      ['stream not a boolean', { model: MODEL, messages: hello, stream: 'yes' }, 400, 'stream', null],
      ['an unknown model', { model: 'no-such-model', messages: hello }, 404, 'model', 'model_not_found'],
      [
        'an image part, for a deployment whose model reads text only',
        {
          model: MODEL,
          messages: [
            { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
          ],
        },
        400,
        'messages[0].content[0].type',
        'model_not_supported',
      ],
      [
        'a tool with an invalid name',
        { model: MODEL, messages: hello, tools: [{ type: 'function', function: { name: 'no spaces allowed' } }] },
        400,
        'tools[0].function.name',
        null,
      ],
      [
        'a tool_choice of the wrong shape',
        { model: MODEL, messages: hello, tool_choice: 'sometimes' },
        400,
        'tool_choice',
        null,
      ],
      [
        'a logit_bias out of range',
        { model: MODEL, messages: hello, logit_bias: { '5': 101 } },
        400,
        'logit_bias',
        null,
      ],
      ['top_logprobs without logprobs', { model: MODEL, messages: hello, top_logprobs: 2 }, 400, 'top_logprobs', null],
      [
        'a prototype-poisoning key',
        '{"model":"conveyor-tiny","messages":[],"__proto__":{"x":1}}',
        400,
        null,
        'invalid_json',
      ],
    ];

    it.each(cases)('refuses %s', async (_name, body, status, param, code) => {
      const before = await jobCount();
      const res = await post(body);
      expect(res.status).toBe(status);
      const json = await readJson<OpenAiErrorBody>(res);
      expect(json).toEqual({
        error: { message: expect.any(String), type: 'invalid_request_error', param, code },
      });
      expect(json.error.message.length).toBeGreaterThan(10);
      expect(await jobCount()).toBe(before);
    });

    it('refuses an empty body sent with a JSON content type as no body at all, not as malformed JSON', async () => {
      const before = await jobCount();
      const res = await post('');
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: {
          message: 'The request body must be a JSON object.',
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      });
      expect(await jobCount()).toBe(before);
    });

    it('refuses an oversized body with 413', async () => {
      const res = await postOversized(`${platform.baseUrl}/v1/chat/completions`, 17 * 1024 * 1024);
      expect(res.status).toBe(413);
      expect(res.json).toMatchObject({ error: { type: 'invalid_request_error', code: 'request_too_large' } });
    });

    it('raises the error through the official client as an APIError', async () => {
      await expect(client.chat.completions.create({ model: 'missing', messages: hello })).rejects.toMatchObject({
        status: 404,
        code: 'model_not_found',
      });
    });

    it('answers unknown routes with a 404 in the same shape', async () => {
      const res = await fetch(`${platform.baseUrl}/v1/nothing-here`);
      expect(res.status).toBe(404);
      expect((await readJson<OpenAiErrorBody>(res)).error.type).toBe('not_found_error');
    });

    it('has no queue dashboard when no admin key is configured', async () => {
      const res = await fetch(`${platform.baseUrl}/admin/queues`, { headers: { authorization: 'Bearer anything' } });
      expect(res.status).toBe(404);
      expect((await readJson<OpenAiErrorBody>(res)).error.type).toBe('not_found_error');
    });
  });

  it('logs JSON lines that follow one request id from the API to the worker, without the prompt', async () => {
    const secret = `prompt-text-${Date.now()}`;
    // ignore_eos: the reply runs to max_tokens (a sampled reply of the random-weight model can end on its third token).
    const res = await post({
      model: MODEL,
      messages: [{ role: 'user', content: secret }],
      max_tokens: 3,
      ignore_eos: true,
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');
    expect((await readJson<ChatCompletion>(res)).id).toBe(`chatcmpl-${requestId}`);
    const linesOf = (p: { output: string[] }) =>
      p.output
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    let api: Record<string, unknown>[] = [];
    let worker: Record<string, unknown>[] = [];
    const until = Date.now() + EVENTUALLY_MS;
    while (Date.now() < until && !worker.some((l) => l.requestId === requestId && l.msg === 'job finished')) {
      await new Promise((r) => setTimeout(r, 20));
      [api, worker] = [linesOf(platform.api!), linesOf(platform.workers[0])];
    }
    expect(api.find((l) => l.requestId === requestId && l.msg === 'request ended')).toMatchObject({
      service: 'api',
      outcome: 'length',
      completionTokens: 3,
    });
    expect(worker.find((l) => l.requestId === requestId && l.msg === 'job finished')).toMatchObject({
      service: 'worker',
      attempt: 1,
    });
    expect(JSON.stringify([...api, ...worker])).not.toContain(secret);
  });

  it('exposes Prometheus metrics: requests by status, queue wait, first token, tokens/s, queue depth, live workers', async () => {
    const res = await fetch(`${platform.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    const value = (pattern: RegExp) => Number(text.match(pattern)?.[1] ?? NaN);
    expect(
      value(/conveyor_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="200"\} (\d+)/),
    ).toBeGreaterThan(5);
    expect(
      value(/conveyor_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="400"\} (\d+)/),
    ).toBeGreaterThan(5);
    expect(
      value(/conveyor_queue_wait_seconds_count\{deployment="conveyor-tiny",tier="default"\} (\d+)/),
    ).toBeGreaterThan(5);
    expect(value(/conveyor_time_to_first_token_seconds_count\{deployment="conveyor-tiny"\} (\d+)/)).toBeGreaterThan(5);
    expect(value(/conveyor_generated_tokens_total\{deployment="conveyor-tiny"\} (\d+)/)).toBeGreaterThan(50);
    expect(value(/conveyor_generation_tokens_per_second_count\{deployment="conveyor-tiny"\} (\d+)/)).toBeGreaterThan(5);
    expect(value(/conveyor_queue_depth\{deployment="conveyor-tiny",kind="interactive"\} (\d+)/)).toBe(0);
    expect(value(/conveyor_live_workers\{deployment="conveyor-tiny"\} (\d+)/)).toBe(1);
    expect(text).toMatch(/conveyor_batch_lines\{state="pending"\} 0/);
  });

  it('accepts a JSON body sent without a Content-Type, as hosted clients do', async () => {
    // Bytes, not a string: fetch would label a string text/plain, which is refused (415).
    const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      body: Buffer.from(JSON.stringify({ model: MODEL, messages: hello, max_tokens: 2 })),
    });
    expect(res.status).toBe(200);
    expect((await readJson<ChatCompletion>(res)).usage.completion_tokens).toBe(2);
  });
});
