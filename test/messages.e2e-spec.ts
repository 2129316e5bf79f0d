import Anthropic from '@anthropic-ai/sdk';
import { Ajv2020 as Ajv } from 'ajv/dist/2020.js';
import { Queue } from 'bullmq';
import { hashKey } from '@conveyor/config';
import type { MessagesErrorBody, TokenizeResponse } from '@conveyor/openai';
import { deploymentQueueName } from '@conveyor/queue';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { readJson } from './support/json.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';

const KEY = 'sk-messages-0123456789';
const MODEL = 'conveyor-tiny';
/** A context a reply fills quickly: max_tokens past it runs to its end. */
const SMALL = 'conveyor-small';
/** Served by no worker: a request to it waits in the queue, so a second one finds the queue full. */
const IDLE = 'conveyor-idle';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const weatherTool = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string', maxLength: 12 } },
    required: ['city'],
  },
};

const config = writeDeploymentsFile({
  deployments: [
    {
      id: MODEL,
      model: 'tiny',
      contextSize: 2048,
      parallel: 2,
      threads: 1,
      alias: { org: 'acme', app: 'chat' },
      auth: 'private',
    },
    { id: IDLE, model: 'tiny', contextSize: 512, parallel: 1, threads: 1 },
    { id: SMALL, model: 'tiny', contextSize: 128, parallel: 1, threads: 1 },
  ],
  apiKeys: [{ name: 'main', sha256: hashKey(KEY) }],
});

/** An SSE body's events: Anthropic names each (`event:`), and this server numbers them (`id:`). */
function parseEvents(raw: string): { event: string; id: string; data: string }[] {
  return raw
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((l) => l.startsWith(`${name}: `))
          ?.slice(name.length + 2) ?? '';
      return { event: field('event'), id: field('id'), data: field('data') };
    });
}

/** Anthropic's Messages API, driven by the official Node client (`@anthropic-ai/sdk`) unchanged, and raw HTTP. */
describe("Anthropic's Messages API", () => {
  let platform: TestPlatform;
  let client: Anthropic;
  const post = (path: string, body: unknown, headers: Record<string, string> = { 'x-api-key': KEY }) =>
    fetch(`${platform.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const queued = async (deployment: string): Promise<number> => {
    const queue = new Queue(deploymentQueueName(deployment), {
      connection: { url: REDIS_URL },
      prefix: platform.prefix,
    });
    try {
      const counts = await queue.getJobCounts('wait', 'prioritized', 'active', 'completed', 'failed');
      return Object.values(counts).reduce((a, b) => a + b, 0);
    } finally {
      await queue.close();
    }
  };

  beforeAll(async () => {
    platform = await TestPlatform.start({
      workers: 0,
      env: { CONVEYOR_CONFIG: config, MAX_QUEUE_DEPTH: '1', QUEUE_TIMEOUT_MS: '20000' },
    });
    await platform.startWorker({}, ['--deployments', `${MODEL},${SMALL}`]);
    client = new Anthropic({ baseURL: platform.baseUrl, apiKey: KEY, maxRetries: 0, timeout: 60_000 });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('answers messages.create with a message: text block, stop reason and usage', async () => {
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 8,
      system: [{ type: 'text', text: 'You are terse.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there.' }] }],
      stop_sequences: ['\n\n\n'],
      metadata: { user_id: 'someone' },
    });
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: MODEL, stop_sequence: null });
    expect(message.id).toMatch(/^msg_/);
    expect(message.content[0]?.type).toBe('text');
    expect(['end_turn', 'max_tokens']).toContain(message.stop_reason);
    expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeLessThanOrEqual(8);
  });

  it('streams with messages.stream: Anthropic events in order, gathered into the same kind of message', async () => {
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 6,
      messages: [{ role: 'user', content: 'Stream to me.' }],
    });
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const final = await stream.finalMessage();
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types.filter((t) => t === 'content_block_start')).toHaveLength(
      types.filter((t) => t === 'content_block_stop').length,
    );
    expect(final.content).toEqual([{ type: 'text', text, citations: null }].map(({ citations: _c, ...b }) => b));
    expect(final.usage.output_tokens).toBe(6);
    expect(final.stop_reason).toBe('max_tokens');
  });

  it('stops at a stop sequence and names it, sync and streamed, the text ending before it', async () => {
    const greedy = {
      model: MODEL,
      max_tokens: 40,
      temperature: 0,
      messages: [{ role: 'user' as const, content: 'Tell me a long story.' }],
    };
    const textOf = (message: Anthropic.Message) =>
      message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    const full = textOf(await client.messages.create(greedy));
    // A stop sequence the greedy reply is sure to contain: a piece of that very reply.
    const stop = full.slice(10, 13);
    const before = full.slice(0, full.indexOf(stop));

    const message = await client.messages.create({ ...greedy, stop_sequences: ['never-generated-zzzz', stop] });
    expect(message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: stop });
    expect(textOf(message)).toBe(before);
    expect(textOf(message)).not.toContain(stop);

    const stream = client.messages.stream({ ...greedy, stop_sequences: [stop] });
    const deltas: unknown[] = [];
    stream.on('streamEvent', (event) => {
      if (event.type === 'message_delta') deltas.push(event.delta);
    });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const final = await stream.finalMessage();
    expect(deltas).toEqual([{ stop_reason: 'stop_sequence', stop_sequence: stop }]);
    expect(final).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: stop });
    expect(text).toBe(before);

    // A reply cut at its budget names no stop sequence, though one was given.
    const cut = await client.messages.create({ ...greedy, max_tokens: 2, stop_sequences: ['never-generated-zzzz'] });
    expect(cut).toMatchObject({ stop_reason: 'max_tokens', stop_sequence: null });
  });

  it("counts tokens as the worker renders the prompt: count_tokens equals a reply's input tokens", async () => {
    const body = {
      model: MODEL,
      system: 'Count me.',
      messages: [{ role: 'user' as const, content: 'How many tokens is this?' }],
      tools: [weatherTool],
    };
    const count = await client.messages.countTokens(body);
    const message = await client.messages.create({ ...body, max_tokens: 1 });
    expect(count.input_tokens).toBeGreaterThan(10);
    expect(count.input_tokens).toBe(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0));
  });

  it('counts what Claude Code sends as its reply reports it: system turns, thinking, replayed thinking, output_config', async () => {
    const body = {
      model: MODEL,
      system: 'Count me.',
      thinking: { type: 'adaptive' },
      messages: [
        { role: 'user', content: 'One.' },
        { role: 'system', content: 'Then this.' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Hm.', signature: 'c2ln' },
            { type: 'text', text: 'Two.' },
          ],
        },
        { role: 'user', content: 'Three?' },
      ],
    };
    const counted = await post('/v1/messages/count_tokens?beta=true', body);
    expect(counted.status).toBe(200);
    const { input_tokens: count } = (await counted.json()) as { input_tokens: number };
    for (const extra of [{}, { output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } }]) {
      const res = await post('/v1/messages?beta=true', { ...body, ...extra, max_tokens: 32000 });
      expect(res.status).toBe(200);
      const { usage } = (await res.json()) as Anthropic.Message;
      // Anthropic's usage: input_tokens are the prompt tokens computed, cache_read_input_tokens those reused.
      expect(usage.input_tokens + (usage.cache_read_input_tokens ?? 0)).toBe(count);
    }
  });

  describe('what Claude Code and the current SDK send', () => {
    const claudeCode = {
      'x-api-key': KEY,
      'anthropic-version': '2023-06-01',
      'anthropic-beta':
        'claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,a-beta-from-the-future-2099-01-01',
    };

    it('takes a system turn inside messages, folded into the system prompt in order', async () => {
      const inside = {
        model: MODEL,
        messages: [
          { role: 'user', content: 'Hello.' },
          { role: 'system', content: [{ type: 'text', text: 'Answer in one word.' }] },
        ],
      };
      const res = await post('/v1/messages?beta=true', { ...inside, max_tokens: 4 }, claudeCode);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ type: 'message', role: 'assistant' });
      // The same prompt as the system field makes: the turn joins it, after the field's own text.
      const folded = { model: MODEL, system: 'Be kind.\n\nAnswer in one word.', messages: [inside.messages[0]!] };
      const withField = { ...inside, system: 'Be kind.' };
      const count = async (body: unknown) =>
        (
          (await (await post('/v1/messages/count_tokens?beta=true', body, claudeCode)).json()) as {
            input_tokens: number;
          }
        ).input_tokens;
      expect(await count(withField)).toBe(await count(folded));
    });

    it('takes thinking adaptive and enabled, replayed thinking blocks, context_management, output_config and max_tokens 32000', async () => {
      for (const thinking of [{ type: 'adaptive' }, { type: 'enabled', budget_tokens: 1024 }]) {
        const res = await post(
          '/v1/messages?beta=true',
          {
            model: SMALL,
            max_tokens: 32000,
            temperature: 1,
            thinking,
            context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
            output_config: { effort: 'medium' },
            system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
            messages: [
              { role: 'user', content: 'Hi' },
              {
                role: 'assistant',
                content: [
                  { type: 'thinking', thinking: 'A greeting.', signature: 'RXVnZW5l' },
                  { type: 'redacted_thinking', data: 'b3BhcXVl' },
                  { type: 'text', text: 'Hello.' },
                ],
              },
              { role: 'user', content: [{ type: 'text', text: 'Again', cache_control: { type: 'ephemeral' } }] },
            ],
            metadata: { user_id: 'user_abc_account_def_session_ghi' },
            stream: true,
          },
          claudeCode,
        );
        expect(res.status).toBe(200);
        const events = parseEvents(await res.text());
        expect(events[0]?.event).toBe('message_start');
        expect(events.at(-1)?.event).toBe('message_stop');
      }
    });

    it('runs max_tokens 32000 to the end of a small context, ending with model_context_window_exceeded', async () => {
      const body = {
        model: SMALL,
        max_tokens: 32000,
        temperature: 0,
        messages: [{ role: 'user' as const, content: 'Write a long story about a lighthouse keeper.' }],
      };
      const message = await client.messages.create(body);
      const { input_tokens, cache_read_input_tokens, output_tokens } = message.usage;
      expect(message.stop_reason).toBe('model_context_window_exceeded');
      // The context as the engine made it: llama.cpp rounds 128 up to 256.
      expect(input_tokens + (cache_read_input_tokens ?? 0) + output_tokens).toBe(256);
      const streamed = await client.messages.stream(body).finalMessage();
      expect(streamed.stop_reason).toBe('model_context_window_exceeded');
      // A reply cut at a budget the context could hold is still max_tokens.
      expect((await client.messages.create({ ...body, max_tokens: 3 })).stop_reason).toBe('max_tokens');
    });

    it('holds the reply to output_config.format: JSON that parses and matches the schema', async () => {
      const schema = {
        type: 'object',
        properties: { city: { type: 'string', maxLength: 12 }, days: { type: 'integer' } },
        required: ['city', 'days'],
        additionalProperties: false,
      };
      const res = await post('/v1/messages', {
        model: MODEL,
        max_tokens: 200,
        messages: [{ role: 'user', content: 'Plan a trip as JSON.' }],
        output_config: { effort: 'low', format: { type: 'json_schema', schema } },
      });
      expect(res.status).toBe(200);
      const message = (await res.json()) as Anthropic.Message;
      const block = message.content[0];
      expect(block?.type).toBe('text');
      const value: unknown = JSON.parse((block as Anthropic.TextBlock).text);
      expect(new Ajv({ strict: false }).validate(schema, value)).toBe(true);
    });
  });

  it('calls a tool, and takes its tool_result back in a round trip', async () => {
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const call = await client.messages.create({
      model: MODEL,
      max_tokens: 60,
      tools: [weatherTool],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
      messages,
    });
    expect(call.stop_reason).toBe('tool_use');
    const uses = call.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    expect(uses.length).toBeGreaterThanOrEqual(1);
    expect(uses[0]).toMatchObject({ name: 'get_weather', input: { city: expect.any(String) } });
    const reply = await client.messages.create({
      model: MODEL,
      max_tokens: 4,
      tools: [weatherTool],
      messages: [
        ...messages,
        { role: 'assistant', content: call.content },
        {
          role: 'user',
          content: uses.map((u) => ({ type: 'tool_result' as const, tool_use_id: u.id, content: 'Sunny, 21 C' })),
        },
      ],
    });
    expect(reply.type).toBe('message');
    expect(reply.usage.input_tokens + (reply.usage.cache_read_input_tokens ?? 0)).toBeGreaterThan(
      call.usage.input_tokens,
    );
  });

  it('streams a tool call as input_json_delta events, gathered into a tool_use block', async () => {
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 60,
      tools: [weatherTool],
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'Weather in Rome?' }],
    });
    const deltas: string[] = [];
    stream.on('streamEvent', (event) => {
      if (event.type === 'content_block_delta') deltas.push(event.delta.type);
    });
    const final = await stream.finalMessage();
    expect(deltas).toContain('input_json_delta');
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content.find((b) => b.type === 'tool_use')).toMatchObject({ input: { city: expect.any(String) } });
  });

  it('refuses an image for a deployment that reads text only, naming the block; URL sources are never fetched', async () => {
    const image = {
      type: 'image' as const,
      source: { type: 'base64' as const, media_type: 'image/png' as const, data: PNG },
    };
    const refused = await client.messages
      .create({
        model: MODEL,
        max_tokens: 2,
        messages: [{ role: 'user', content: [image, { type: 'text', text: 'What?' }] }],
      })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('messages[0].content[0]') },
    });
    const url = await post('/v1/messages', {
      model: MODEL,
      max_tokens: 2,
      messages: [
        { role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'http://127.0.0.1/x.png' } }] },
      ],
    });
    expect(url.status).toBe(400);
    expect((await readJson<MessagesErrorBody>(url)).error.message).toContain('never fetched');
  });

  describe('errors, in Anthropic shape, with nothing queued for bad input', () => {
    it.each<[string, unknown, number, string]>([
      ['no max_tokens', { model: IDLE, messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request_error'],
      ['no messages', { model: IDLE, max_tokens: 1, messages: [] }, 400, 'invalid_request_error'],
      [
        'a bad role',
        { model: IDLE, max_tokens: 1, messages: [{ role: 'tool', content: 'x' }] },
        400,
        'invalid_request_error',
      ],
      [
        'a tool_result for no call',
        {
          model: IDLE,
          max_tokens: 1,
          messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope' }] }],
        },
        400,
        'invalid_request_error',
      ],
      [
        'only system turns',
        { model: IDLE, max_tokens: 1, messages: [{ role: 'system', content: 'x' }] },
        400,
        'invalid_request_error',
      ],
      [
        'a prompt alone too long for the context, however max_tokens is clamped',
        { model: IDLE, max_tokens: 32000, messages: [{ role: 'user', content: 'x'.repeat(512 * 33) }] },
        400,
        'invalid_request_error',
      ],
      [
        'an output_config.format that is not a JSON Schema format',
        {
          model: IDLE,
          max_tokens: 8,
          messages: [{ role: 'user', content: 'x' }],
          output_config: { format: { type: 'xml' } },
        },
        400,
        'invalid_request_error',
      ],
      [
        'an unknown model',
        { model: 'nope', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] },
        404,
        'not_found_error',
      ],
    ])('%s', async (_name, body, status, type) => {
      const res = await post('/v1/messages', body);
      expect(res.status).toBe(status);
      expect(await res.json()).toEqual({ type: 'error', error: { type, message: expect.any(String) } });
    });

    it('queued nothing for any of them', async () => {
      expect(await queued(IDLE)).toBe(0);
    });

    it('a wrong key is a 401 authentication_error, raised by the client as AuthenticationError', async () => {
      const wrong = new Anthropic({ baseURL: platform.baseUrl, apiKey: 'sk-wrong', maxRetries: 0 });
      const err = await wrong.messages
        .create({ model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((err as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({
        type: 'error',
        error: { type: 'authentication_error' },
      });
    });

    it('a full queue is a 529 overloaded_error', async () => {
      const waiting = new AbortController();
      const first = client.messages
        .create(
          { model: IDLE, max_tokens: 1, messages: [{ role: 'user', content: 'wait' }] },
          { signal: waiting.signal },
        )
        .catch((e: unknown) => e);
      while ((await queued(IDLE)) === 0) await new Promise((r) => setTimeout(r, 50));
      const err = await client.messages
        .create({ model: IDLE, max_tokens: 1, messages: [{ role: 'user', content: 'refused' }] })
        .catch((e: unknown) => e);
      waiting.abort();
      await first;
      expect(err).toBeInstanceOf(Anthropic.APIError);
      expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
      expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        error: { type: 'overloaded_error' },
      });
    });

    it('takes the key as Authorization: Bearer too, with anthropic-version, sampling fields and thinking', async () => {
      const res = await post(
        '/v1/messages',
        {
          model: MODEL,
          max_tokens: 4,
          temperature: 0,
          top_p: 0.9,
          top_k: 20,
          thinking: { type: 'enabled', budget_tokens: 2 },
          messages: [{ role: 'user', content: 'x' }],
        },
        { authorization: `Bearer ${KEY}`, 'anthropic-version': '2023-06-01' },
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ type: 'message' });
    });
  });

  it('resumes a streamed message after Last-Event-ID with the same events', async () => {
    const res = await post('/v1/messages', {
      model: MODEL,
      max_tokens: 6,
      stream: true,
      messages: [{ role: 'user', content: 'Resume me.' }],
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = parseEvents(await res.text());
    expect(events.map((e) => e.event)).toEqual(
      expect.arrayContaining(['message_start', 'ping', 'content_block_start', 'message_delta', 'message_stop']),
    );
    for (const e of events) expect(JSON.parse(e.data)).toMatchObject({ type: e.event });
    const id = (JSON.parse(events[0]!.data) as { message: { id: string } }).message.id;
    const again = await fetch(`${platform.baseUrl}/v1/messages/${id}/stream`, {
      headers: { 'x-api-key': KEY, 'last-event-id': '2' },
    });
    expect(parseEvents(await again.text())).toEqual(events.slice(3));
  });

  describe('the hosted org/app form', () => {
    it('serves messages and count_tokens under /<org>/<app>/v1 with the key as the client sends it', async () => {
      const hosted = new Anthropic({ baseURL: `${platform.baseUrl}/acme/chat`, apiKey: KEY, maxRetries: 0 });
      const message = await hosted.messages.create({
        model: MODEL,
        max_tokens: 2,
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(message.type).toBe('message');
      const count = await hosted.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'x' }] });
      expect(count.input_tokens).toBeGreaterThan(0);
    });

    it('takes Authorization: Key, and answers a wrong one and an unknown app in Anthropic shape', async () => {
      const body = { model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: 'x' }] };
      expect((await post('/acme/chat/v1/messages', body, { authorization: `Key ${KEY}` })).status).toBe(200);
      const wrong = await post('/acme/chat/v1/messages', body, { authorization: 'Key sk-wrong' });
      expect(wrong.status).toBe(401);
      expect(await wrong.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      const unknown = await post('/acme/nothing/v1/messages', body, { authorization: `Key ${KEY}` });
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    });
  });

  describe("vLLM's /tokenize and /detokenize, answered by the deployment's worker", () => {
    it('tokenizes a prompt and detokenizes it back', async () => {
      const res = await post('/tokenize', { model: MODEL, prompt: 'Hello queue', add_special_tokens: false });
      expect(res.status).toBe(200);
      const tokenized = await readJson<TokenizeResponse>(res);
      expect(tokenized.count).toBe(tokenized.tokens.length);
      expect(tokenized.max_model_len).toBe(2048);
      const back = await post('/v1/detokenize', { model: MODEL, tokens: tokenized.tokens });
      expect(await back.json()).toEqual({ prompt: 'Hello queue' });
    });

    it("counts chat messages as the chat route's usage does, on the hosted form too", async () => {
      const messages = [{ role: 'user', content: 'Count this chat.' }];
      const counted = await readJson<TokenizeResponse>(
        await post('/acme/chat/v1/tokenize', { model: MODEL, messages }, { authorization: `Key ${KEY}` }),
      );
      const chat = await post(
        '/v1/chat/completions',
        { model: MODEL, messages, max_tokens: 1 },
        { authorization: `Bearer ${KEY}` },
      );
      const usage = ((await chat.json()) as { usage: { prompt_tokens: number } }).usage;
      expect(counted.count).toBe(usage.prompt_tokens);
      const anthropic = await client.messages.countTokens({
        model: MODEL,
        messages: [{ role: 'user', content: 'Count this chat.' }],
      });
      expect(anthropic.input_tokens).toBe(counted.count);
    });

    it('asks for Authorization: Key on the hosted form, refusing Bearer as the hosted OpenAI routes do', async () => {
      const bodies = { tokenize: { model: MODEL, prompt: 'Hi' }, detokenize: { model: MODEL, tokens: [1] } };
      const bearer = { authorization: `Bearer ${KEY}` };
      // The hosted chat route's answer to a Bearer key: the 401 every hosted OpenAI route gives.
      const chat = await post('/acme/chat/v1/chat/completions', { model: MODEL, messages: [] }, bearer);
      expect(chat.status).toBe(401);
      const refusal = await chat.json();
      expect(refusal).toMatchObject({ error: { type: 'authentication_error', code: 'invalid_api_key' } });
      for (const [route, body] of Object.entries(bodies)) {
        const refused = await post(`/acme/chat/v1/${route}`, body, bearer);
        expect({ route, status: refused.status, body: await refused.json() }).toEqual({
          route,
          status: 401,
          body: refusal,
        });
        expect((await post(`/acme/chat/v1/${route}`, body, { authorization: `Key ${KEY}` })).status).toBe(200);
      }
    });

    it('refuses a token outside the vocabulary with a 400 naming it', async () => {
      const res = await post('/detokenize', { model: MODEL, tokens: [1, 99_999_999] });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { param: 'tokens[1]', type: 'invalid_request_error' } });
    });
  });
});
