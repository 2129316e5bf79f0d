import OpenAI from 'openai';
import { Ajv2020 as Ajv } from 'ajv/dist/2020.js';
import type { ChatCompletion, ChatCompletionRequest } from '@conveyor/openai';
import { fileLines, jsonl, submitBatch, waitForBatch } from './support/batches.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { TestPlatform } from './support/platform.js';

const MODEL = 'conveyor-tiny';
const ask = [{ role: 'user' as const, content: 'Look both up.' }];

/**
 * One-letter functions without parameters: a call costs 4 or 5 tokens and a further one needs 6, so with
 * ignore_eos (the reply may not end while another call fits) 12 tokens make exactly two calls.
 */
const noArgs = (name: string): OpenAI.ChatCompletionFunctionTool => ({
  type: 'function',
  function: { name, parameters: { type: 'object', properties: {}, additionalProperties: false } },
});
const short = [noArgs('a'), noArgs('b')];
const weather: OpenAI.ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['celsius', 'fahrenheit'] } },
      required: ['city', 'unit'],
      additionalProperties: false,
    },
  },
};

type Extensions = Pick<ChatCompletionRequest, 'ignore_eos'>;
const twoCalls = {
  model: MODEL,
  messages: ask,
  tools: short,
  tool_choice: 'required' as const,
  temperature: 0,
  max_tokens: 12,
  ignore_eos: true,
};
const sync = (extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) =>
  ({ ...twoCalls, ...extra }) as OpenAI.ChatCompletionCreateParamsNonStreaming & Extensions;
const streamed = (extra: Partial<OpenAI.ChatCompletionCreateParamsStreaming> = {}) =>
  ({ ...twoCalls, stream: true, ...extra }) as OpenAI.ChatCompletionCreateParamsStreaming & Extensions;

const functionCalls = (message: OpenAI.ChatCompletionMessage) =>
  (message.tool_calls ?? []) as OpenAI.ChatCompletionMessageFunctionToolCall[];

describe('several tool calls in one reply end to end (openai client)', () => {
  let platform: TestPlatform;
  let client: OpenAI;

  beforeAll(async () => {
    const config = writeDeploymentsFile({
      deployments: [{ id: MODEL, model: 'tiny', contextSize: 2048, parallel: 2, threads: 1 }],
    });
    platform = await TestPlatform.start({
      env: { CONVEYOR_CONFIG: config, DATA_DIR: `/tmp/conveyor-test-data-${process.pid}-tool-calls` },
    });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
  }, 60_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('answers two calls in message.tool_calls, each with its own id, and finish_reason tool_calls', async () => {
    const reply = await client.chat.completions.create(sync());
    const [choice] = reply.choices;
    expect(choice!.finish_reason).toBe('tool_calls');
    expect(choice!.message.content).toBeNull();
    const calls = functionCalls(choice!.message);
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call).toMatchObject({ id: expect.stringMatching(/^call_/), type: 'function' });
      expect(['a', 'b']).toContain(call.function.name);
      expect(JSON.parse(call.function.arguments)).toEqual({});
    }
    expect(calls[0]!.id).not.toBe(calls[1]!.id);
  });

  it('streams the calls as delta.tool_calls indexed 0 and 1, id and name on the first piece of each', async () => {
    const pieces: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    let finish: string | null = null;
    for await (const chunk of await client.chat.completions.create(streamed())) {
      pieces.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe('tool_calls');
    expect(pieces.map((p) => p.index)).toEqual([...pieces.map((p) => p.index)].sort());
    expect(new Set(pieces.map((p) => p.index))).toEqual(new Set([0, 1]));
    for (const index of [0, 1]) {
      const [first, ...rest] = pieces.filter((p) => p.index === index);
      expect(first).toMatchObject({ id: expect.stringMatching(/^call_/), type: 'function' });
      expect(['a', 'b']).toContain(first!.function?.name);
      for (const later of rest) expect(later.id).toBeUndefined();
    }

    // The client's own stream helper assembles the same two calls.
    const final = await client.chat.completions.stream(streamed()).finalChatCompletion();
    expect(functionCalls(final.choices[0]!.message).map((c) => JSON.parse(c.function.arguments))).toEqual([{}, {}]);
  });

  it('makes one call with parallel_tool_calls false, synchronous and streamed', async () => {
    const reply = await client.chat.completions.create(sync({ parallel_tool_calls: false }));
    expect(reply.choices[0]!.finish_reason).toBe('tool_calls');
    expect(functionCalls(reply.choices[0]!.message)).toHaveLength(1);
    const final = await client.chat.completions.stream(streamed({ parallel_tool_calls: false })).finalChatCompletion();
    expect(functionCalls(final.choices[0]!.message)).toHaveLength(1);
  });

  it('holds every call to its schema, and takes several calls and their results back as history', async () => {
    const reply = await client.chat.completions.create(sync({ tools: [weather], max_tokens: 160 }));
    const calls = functionCalls(reply.choices[0]!.message);
    expect(reply.choices[0]!.finish_reason).toBe('tool_calls');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    const ajv = new Ajv({ strict: false });
    for (const call of calls)
      expect(ajv.validate(weather.function.parameters!, JSON.parse(call.function.arguments))).toBe(true);

    const answerTo = (messages: OpenAI.ChatCompletionMessageParam[]) =>
      client.chat.completions.create({ model: MODEL, messages, tools: [weather], tool_choice: 'none', max_tokens: 4 });
    const results = calls.map((c, i) => ({
      role: 'tool' as const,
      tool_call_id: c.id,
      content: `{"temperature": ${20 + i}}`,
    }));
    const answer = await answerTo([...ask, { role: 'assistant', content: null, tool_calls: calls }, ...results]);
    expect(answer.choices[0]!.message.tool_calls ?? []).toEqual([]);
    // Every call and every result is part of the prompt the model was given.
    const bare = await answerTo(ask);
    const perCall = (answer.usage!.prompt_tokens - bare.usage!.prompt_tokens) / calls.length;
    expect(perCall).toBeGreaterThan(20);
  });

  it('writes a batch line with two calls in the same shape', async () => {
    const batch = await submitBatch(client, jsonl([{ custom_id: 'two', body: { ...sync() } }]));
    const done = await waitForBatch(client, batch.id);
    expect(done.status).toBe('completed');
    const [line] = await fileLines<ChatCompletion>(client, done.output_file_id);
    const choice = line!.response!.body.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls?.map((c) => c.type)).toEqual(['function', 'function']);
  });
});
