import OpenAI from 'openai';
import { Queue } from 'bullmq';
import { hashKey } from '@conveyor/config';
import type { OpenAiErrorBody, ResponseObject, ResponseStreamEvent } from '@conveyor/openai';
import { deploymentQueueName } from '@conveyor/queue';
import { jsonl, waitForBatch, type OutputLine } from './support/batches.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { readJson } from './support/json.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';
import { toFile } from 'openai';
import { encodeReasoning } from '@conveyor/protocol';
import { isApplyPatch } from './support/apply-patch-grammar.js';
import { codexRequest } from './support/codex-request.js';

const MODEL = 'conveyor-tiny';
const KEY = 'sk-responses-main-0123';
const OTHER_KEY = 'sk-responses-other-0123';
const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', maxLength: 12 } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

/** The events of a raw Responses stream: each `event:` name must be its payload's type, and `id:` its sequence_number. */
async function readEvents(res: Response): Promise<ResponseStreamEvent[]> {
  const raw = await res.text();
  const blocks = raw.split('\n\n').filter(Boolean);
  return blocks.map((block) => {
    const [event, id, data] = block.split('\n');
    const payload = JSON.parse(data.slice('data: '.length)) as ResponseStreamEvent;
    expect(event).toBe(`event: ${payload.type}`);
    expect(id).toBe(`id: ${payload.sequence_number}`);
    return payload;
  });
}

describe('the Responses API end to end, with the official Node client', () => {
  let platform: TestPlatform;
  let client: OpenAI;
  let other: OpenAI;
  const post = (path: string, body: unknown, key = KEY) =>
    fetch(`${platform.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    const config = writeDeploymentsFile({
      deployments: [
        {
          id: MODEL,
          model: 'tiny',
          contextSize: 4096, // Room for a Codex-shaped request: its tools and grammar are about 2,600 tokens.
          parallel: 2,
          threads: 1,
          alias: { org: 'acme', app: 'replies' },
          auth: 'private',
        },
      ],
      apiKeys: [
        { name: 'main', sha256: hashKey(KEY) },
        { name: 'other', sha256: hashKey(OTHER_KEY) },
      ],
    });
    platform = await TestPlatform.start({
      env: { CONVEYOR_CONFIG: config, DATA_DIR: `/tmp/conveyor-test-data-${process.pid}-responses` },
    });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
    other = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: OTHER_KEY, maxRetries: 0 });
  }, 60_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('creates a response from text and instructions, and stores it for its key alone', async () => {
    const response = await client.responses.create({
      model: MODEL,
      instructions: 'Answer briefly.',
      input: 'Say hello to the queue.',
      max_output_tokens: 12,
      temperature: 0,
    });
    expect(response).toMatchObject({
      id: expect.stringMatching(/^resp_/),
      object: 'response',
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      model: MODEL,
      instructions: 'Answer briefly.',
      store: true,
      output: [
        {
          type: 'message',
          id: expect.stringMatching(/^msg_/),
          role: 'assistant',
          content: [{ type: 'output_text', text: expect.any(String) }],
        },
      ],
      usage: { output_tokens: 12, input_tokens: expect.any(Number) },
    });
    expect(response.output_text.length).toBeGreaterThan(0);
    const again = await client.responses.retrieve(response.id);
    expect({ ...again, output_text: response.output_text }).toEqual(response);
    const items = await client.responses.inputItems.list(response.id);
    expect(items.data).toEqual([
      expect.objectContaining({ type: 'message', role: 'user', content: 'Say hello to the queue.' }),
    ]);
    await expect(other.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.responses.delete(response.id)).rejects.toMatchObject({ status: 404 });
    await client.responses.delete(response.id);
    await expect(client.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
  });

  it('continues a stored conversation with previous_response_id, for its key only', async () => {
    const first = await client.responses.create({
      model: MODEL,
      input: 'Remember the number 7.',
      max_output_tokens: 6,
    });
    const second = await client.responses.create({
      model: MODEL,
      input: 'Which number?',
      previous_response_id: first.id,
      max_output_tokens: 6,
    });
    expect(second.previous_response_id).toBe(first.id);
    // The first turn, its reply and the new turn are all in the prompt.
    expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens + first.usage!.output_tokens);
    await expect(
      other.responses.create({ model: MODEL, input: 'x', previous_response_id: first.id }),
    ).rejects.toMatchObject({ status: 404, error: { param: 'previous_response_id' } });
    const unstored = await client.responses.create({ model: MODEL, input: 'x', max_output_tokens: 2, store: false });
    await expect(client.responses.retrieve(unstored.id)).rejects.toMatchObject({ status: 404 });
  });

  it('streams the Responses event sequence, numbered, and resumes after a sequence_number', async () => {
    const stream = client.responses.stream({
      model: MODEL,
      input: 'Stream to me.',
      max_output_tokens: 8,
      temperature: 0,
    });
    const types: string[] = [];
    let deltas = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') deltas += event.delta;
    }
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(deltas);
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.incomplete',
    ]);
    // The client adds `parsed` to the streamed output; the stored one is otherwise the same.
    expect(final.output).toMatchObject((await client.responses.retrieve(final.id)).output);

    const res = await post('/v1/responses', { model: MODEL, input: 'Raw stream.', max_output_tokens: 6, stream: true });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readEvents(res);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const id = (events[0] as { response: ResponseObject }).response.id;
    const resumed = await readEvents(
      await fetch(`${platform.baseUrl}/v1/responses/${id}?stream=true&starting_after=3`, {
        headers: { authorization: `Bearer ${KEY}` },
      }),
    );
    expect(resumed).toEqual(events.slice(4));
  });

  it('calls a function, and takes its output back with previous_response_id', async () => {
    const call = await client.responses.create({
      model: MODEL,
      input: 'What is the weather in Paris?',
      tools: [weatherTool],
      tool_choice: 'required',
      max_output_tokens: 60,
    });
    const calls = call.output.filter((item) => item.type === 'function_call');
    expect(calls).toEqual([
      expect.objectContaining({ type: 'function_call', name: 'get_weather', call_id: expect.any(String) }),
    ]);
    const args = JSON.parse(calls[0].arguments) as { city: unknown };
    expect(typeof args.city).toBe('string');
    const answer = await client.responses.create({
      model: MODEL,
      previous_response_id: call.id,
      input: [{ type: 'function_call_output', call_id: calls[0].call_id, output: '{"celsius": 21}' }],
      tools: [weatherTool],
      tool_choice: 'none',
      max_output_tokens: 6,
    });
    expect(answer.output.map((item) => item.type)).toEqual(['message']);
    // A call the conversation never made cannot be answered.
    await expect(
      client.responses.create({
        model: MODEL,
        input: [{ type: 'function_call_output', call_id: 'call_nobody', output: '1' }],
      }),
    ).rejects.toMatchObject({ status: 400, error: { param: 'input[0].call_id' } });
  });

  it('streams a function call as function_call_arguments events', async () => {
    const stream = client.responses.stream({
      model: MODEL,
      input: 'Weather in Rome?',
      tools: [weatherTool],
      tool_choice: { type: 'function', name: 'get_weather' },
      max_output_tokens: 60,
    });
    const done: string[] = [];
    for await (const event of stream)
      if (event.type === 'response.function_call_arguments.done') done.push(event.arguments);
    const final = await stream.finalResponse();
    const item = final.output.find((i) => i.type === 'function_call');
    expect(done).toEqual([item!.type === 'function_call' ? item!.arguments : '']);
    expect(JSON.parse(done[0])).toEqual({ city: expect.any(String) });
  });

  it('answers in the requested JSON schema (text.format)', async () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string', maxLength: 10 }, age: { type: 'integer' } },
      required: ['name', 'age'],
      additionalProperties: false,
    };
    const response = await client.responses.create({
      model: MODEL,
      input: 'A person, please.',
      text: { format: { type: 'json_schema', name: 'person', schema, strict: true } },
      max_output_tokens: 60,
    });
    expect(JSON.parse(response.output_text)).toEqual({ name: expect.any(String), age: expect.any(Number) });
    expect(response.text?.format).toMatchObject({ type: 'json_schema', name: 'person' });
  });

  it('runs a background response, polled from queued to completed, and cancels another', async () => {
    const queued = await client.responses.create({
      model: MODEL,
      input: 'Work on this later.',
      background: true,
      max_output_tokens: 8,
    });
    expect(queued).toMatchObject({ status: 'queued', background: true, output: [] });
    let polled = queued;
    const seen = new Set<string>([queued.status!]);
    const until = Date.now() + 30_000;
    while (polled.status === 'queued' || polled.status === 'in_progress') {
      expect(Date.now()).toBeLessThan(until);
      await new Promise((r) => setTimeout(r, 50));
      polled = await client.responses.retrieve(queued.id);
      seen.add(polled.status!);
    }
    expect(polled).toMatchObject({ status: 'incomplete', usage: { output_tokens: 8 } });
    expect(polled.output_text.length).toBeGreaterThan(0);

    // ignore_eos (the extra chat also takes) keeps it running until it is cancelled.
    const body = { model: MODEL, input: 'Go on.', background: true, max_output_tokens: 1500, ignore_eos: true };
    const long = await client.responses.create(body as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    const cancelled = await client.responses.cancel(long.id);
    expect(cancelled.status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 300));
    expect((await client.responses.retrieve(long.id)).status).toBe('cancelled');
    // Only background responses can be cancelled.
    await expect(client.responses.cancel(polled.id)).resolves.toMatchObject({ status: 'incomplete' });
  });

  it('runs a batch of /v1/responses lines', async () => {
    const lines = ['a', 'b'].map((id) =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/responses',
        body: { model: MODEL, input: `Line ${id}`, max_output_tokens: 4, temperature: 0 },
      }),
    );
    const file = await client.files.create({
      file: await toFile(Buffer.from(jsonl(lines)), 'r.jsonl'),
      purpose: 'batch',
    });
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/responses',
      completion_window: '24h',
    });
    const done = await waitForBatch(client, batch.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 2, failed: 0 } });
    const text = await (await client.files.content(done.output_file_id!)).text();
    const out = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as OutputLine<ResponseObject>);
    expect(out.map((l) => l.custom_id).sort()).toEqual(['a', 'b']);
    for (const line of out)
      expect(line.response!.body).toMatchObject({
        object: 'response',
        id: expect.stringMatching(/^resp_/),
        output: [{ type: 'message', content: [{ type: 'output_text' }] }],
      });
  });

  it('serves the hosted app form', async () => {
    const url = `${platform.baseUrl}/acme/replies/v1/responses`;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Key ${KEY}` },
      body: JSON.stringify({ model: MODEL, input: 'Hosted.', max_output_tokens: 3 }),
    });
    expect(res.status).toBe(200);
    const response = await readJson<ResponseObject>(res);
    const again = await fetch(`${url}/${response.id}`, { headers: { authorization: `Key ${KEY}` } });
    expect((await readJson<ResponseObject>(again)).id).toBe(response.id);
    const items = await fetch(`${url}/${response.id}/input_items?order=asc`, {
      headers: { authorization: `Key ${KEY}` },
    });
    expect(items.status).toBe(200);
  });

  it('answers a request shaped as Codex CLI sends it, unstreamed and streamed, with the same ids streamed as in the end', async () => {
    const body = { ...codexRequest(MODEL), max_output_tokens: 8, temperature: 0 };
    const res = await post('/v1/responses', body);
    if (res.status !== 200) throw new Error(await res.text());
    const response = await readJson<ResponseObject>(res);
    expect(response).toMatchObject({
      status: 'incomplete',
      store: false,
      parallel_tool_calls: true,
      reasoning: { summary: 'auto' },
      tools: codexRequest(MODEL).tools,
      output: [{ type: 'message', status: 'incomplete' }],
    });
    // Not stored: there is nothing to retrieve.
    expect(
      (await fetch(`${platform.baseUrl}/v1/responses/${response.id}`, { headers: { authorization: `Bearer ${KEY}` } }))
        .status,
    ).toBe(404);

    const streamed = await post('/v1/responses', { ...body, stream: true });
    expect(streamed.status).toBe(200);
    const events = await readEvents(streamed);
    const last = events.at(-1);
    expect(last?.type).toBe('response.incomplete');
    const final = last && 'response' in last ? last.response : null;
    const added = events.flatMap((e) => (e.type === 'response.output_item.added' ? [e.item.id] : []));
    const done = events.flatMap((e) => (e.type === 'response.output_item.done' ? [e.item] : []));
    expect(added.length).toBeGreaterThan(0);
    expect(final?.output.map((i) => i.id)).toEqual(added);
    expect(final?.output).toEqual(done);
    expect(final?.output.at(-1)).toMatchObject({ type: 'message', status: 'incomplete' });
  });

  it("takes back Codex's history: a namespace's call, a custom tool's call and their outputs as content parts", async () => {
    const base = codexRequest(MODEL);
    const res = await post('/v1/responses', {
      ...base,
      max_output_tokens: 4,
      input: [
        ...(base.input as unknown[]),
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: encodeReasoning('Patch, then close.') },
        { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n' },
        {
          type: 'function_call',
          call_id: 'call_c',
          name: 'close_agent',
          namespace: 'multi_agent_v1',
          arguments: '{"target":"t"}',
        },
        { type: 'custom_tool_call_output', call_id: 'call_p', output: 'Success.' },
        { type: 'function_call_output', call_id: 'call_c', output: [{ type: 'input_text', text: 'closed' }] },
      ],
    });
    expect(res.status).toBe(200);
    const altered = await post('/v1/responses', {
      ...base,
      input: [
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'cvr1.AAAA.x' },
        ...(base.input as unknown[]),
      ],
    });
    expect(altered.status).toBe(400);
    expect((await readJson<OpenAiErrorBody>(altered)).error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringContaining('encrypted_content'),
    });
  });

  it("holds a custom tool's input to its regular-expression grammar", async () => {
    const definition = '^[A-Z]{3}-[0-9]{2,4}( (open|shut))?$';
    const tool = { type: 'custom', name: 'ticket', format: { type: 'grammar', syntax: 'regex', definition } };
    for (const seed of [1, 2, 3]) {
      const res = await post('/v1/responses', {
        model: MODEL,
        input: 'File a ticket.',
        tools: [tool],
        tool_choice: { type: 'custom', name: 'ticket' },
        temperature: 1,
        seed,
        max_output_tokens: 64,
      });
      if (res.status !== 200) throw new Error(await res.text());
      const response = await readJson<ResponseObject>(res);
      const call = response.output.find((i) => i.type === 'custom_tool_call');
      expect(call).toMatchObject({ name: 'ticket', input: expect.stringMatching(new RegExp(definition)) });
    }
  });

  it("holds Codex's apply_patch input to its Lark grammar: a forced call writes a well-formed patch", async () => {
    for (const seed of [1, 2, 3]) {
      const res = await post('/v1/responses', {
        ...codexRequest(MODEL),
        tool_choice: { type: 'custom', name: 'apply_patch' },
        temperature: 1,
        seed,
        max_output_tokens: 600,
      });
      if (res.status !== 200) throw new Error(await res.text());
      const response = await readJson<ResponseObject>(res);
      const call = response.output.find((i) => i.type === 'custom_tool_call');
      expect(call).toMatchObject({ name: 'apply_patch' });
      const input = (call as { input: string }).input;
      if (!isApplyPatch(input)) throw new Error(`not a patch: ${JSON.stringify(input)}`);
    }
  });

  it('refuses bad input with an OpenAI error naming the field, and queues nothing', async () => {
    const queue = new Queue(deploymentQueueName(MODEL), { connection: { url: REDIS_URL }, prefix: platform.prefix });
    try {
      const before = await queue.getJobCounts();
      const cases: Array<[unknown, number, string | null]> = [
        [{ model: MODEL, input: [{ role: 'robot', content: 'x' }] }, 400, 'input'],
        [{ model: MODEL, input: 'x', tools: [{ type: 'teleport' }] }, 400, 'tools[0].type'],
        [{ ...codexRequest(MODEL), tool_choice: { type: 'web_search' } }, 400, 'tool_choice.type'],
        [{ model: MODEL, input: 'x', tools: [{ type: 'file_search' }], tool_choice: 'required' }, 400, 'tool_choice'],
        [{ model: MODEL, input: 'x', tools: [{ type: 'namespace', name: 'n', tools: [] }] }, 400, 'tools[0].tools'],
        [{ model: MODEL, input: 'x', text: { format: { type: 'xml' } } }, 400, 'text.format.type'],
        [{ model: MODEL, input: 'x', background: true, store: false }, 400, 'store'],
        [{ model: MODEL, input: 'x', previous_response_id: 'resp_nothing' }, 404, 'previous_response_id'],
        [{ model: 'nope', input: 'x' }, 404, 'model'],
        [{ model: MODEL, input: 'x', max_output_tokens: 8192 }, 400, 'max_output_tokens'],
      ];
      for (const [body, status, param] of cases) {
        const res = await post('/v1/responses', body);
        expect(res.status).toBe(status);
        const error = (await readJson<OpenAiErrorBody>(res)).error;
        expect(error).toMatchObject({ param, type: expect.any(String), message: expect.any(String) });
      }
      const missing = await fetch(`${platform.baseUrl}/v1/responses/resp_nothing/input_items?limit=0`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      expect(missing.status).toBe(400);
      expect(await queue.getJobCounts()).toEqual(before);
    } finally {
      await queue.close();
    }
  });
});
