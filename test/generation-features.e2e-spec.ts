import OpenAI, { toFile } from 'openai';
import { Ajv2020 as Ajv } from 'ajv/dist/2020.js';
import { presetTokenId } from '@conveyor/gguf';
import type { ChatCompletion, ChatCompletionRequest } from '@conveyor/openai';
import { fileLines, jsonl, waitForBatch } from './support/batches.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { TestPlatform } from './support/platform.js';

const MODEL = 'conveyor-tiny';
const ask = [{ role: 'user' as const, content: 'What is the weather in Paris?' }];

const weatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string', maxLength: 24 },
        unit: { enum: ['celsius', 'fahrenheit'] },
        days: { type: 'integer' },
      },
      required: ['city', 'unit'],
      additionalProperties: false,
    },
  },
};
const timeTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_time',
    parameters: { type: 'object', properties: { zone: { type: 'string', format: 'date' } }, required: ['zone'] },
  },
};

const personSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 16 },
    age: { type: 'integer' },
    tags: { type: 'array', items: { type: 'string', maxLength: 8 }, maxItems: 3 },
    role: { anyOf: [{ enum: ['admin', 'user'] }, { type: 'null' }] },
  },
  required: ['name', 'age', 'tags', 'role'],
  additionalProperties: false,
};

const ajv = new Ajv({ strict: false });
const validates = (schema: object, value: unknown): boolean => {
  const ok = ajv.validate(schema, value);
  if (!ok) throw new Error(`${JSON.stringify(value)} fails its schema: ${ajv.errorsText()}`);
  return ok;
};

/** Joins streamed tool call pieces as OpenAI clients do: by index, the first piece carries id and name. */
function reassembleToolCalls(
  chunks: OpenAI.ChatCompletionChunk[],
): Array<{ id: string; name: string; arguments: string }> {
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  for (const chunk of chunks) {
    for (const piece of chunk.choices[0]?.delta.tool_calls ?? []) {
      const call = (calls[piece.index] ??= { id: '', name: '', arguments: '' });
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.name = piece.function.name;
      call.arguments += piece.function?.arguments ?? '';
    }
  }
  return calls;
}

/** llama.cpp's sampling extensions, accepted beside OpenAI's fields; the client sends them as they are. */
type Extensions = Pick<ChatCompletionRequest, 'ignore_eos' | 'min_tokens'>;
const extended = (params: OpenAI.ChatCompletionCreateParamsNonStreaming & Extensions) => params;
const extendedStream = (params: OpenAI.ChatCompletionCreateParamsStreaming & Extensions) => params;

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const chunks: T[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('generation features end to end (tools, structured output, reasoning, logprobs, n, seed)', () => {
  let platform: TestPlatform;
  let client: OpenAI;

  beforeAll(async () => {
    const config = writeDeploymentsFile({
      deployments: [
        // Tests repeat seeded replies for the same text: only the exact prompt cache promises that.
        { id: MODEL, model: 'tiny', contextSize: 2048, parallel: 4, threads: 1, promptCache: 'exact' },
        { id: 'think-on', model: 'think', contextSize: 512, parallel: 1, threads: 1, reasoningParser: 'think' },
        { id: 'think-off', model: 'think', contextSize: 512, parallel: 1, threads: 1 },
      ],
    });
    platform = await TestPlatform.start({
      env: { CONVEYOR_CONFIG: config, DATA_DIR: `/tmp/conveyor-test-data-${process.pid}-features` },
    });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
  }, 60_000);

  afterAll(async () => {
    await platform?.stop();
  });

  describe('tools', () => {
    it('makes a forced call whose arguments parse and match the schema, whatever the seed', async () => {
      for (const seed of [1, 2, 3]) {
        const reply = await client.chat.completions.create({
          model: MODEL,
          messages: ask,
          tools: [weatherTool, timeTool],
          tool_choice: { type: 'function', function: { name: 'get_weather' } },
          temperature: 1,
          seed,
          max_tokens: 200,
        });
        const choice = reply.choices[0];
        expect(choice.finish_reason).toBe('tool_calls');
        expect(choice.message.content).toBeNull();
        expect(choice.message.tool_calls).toHaveLength(1);
        const call = choice.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
        expect(call).toMatchObject({
          id: expect.stringMatching(/^call_/),
          type: 'function',
          function: { name: 'get_weather' },
        });
        expect(validates(weatherTool.function.parameters!, JSON.parse(call.function.arguments))).toBe(true);
      }
    });

    it('streams a required call as OpenAI tool call deltas that reassemble into a valid call', async () => {
      const chunks = await collect(
        await client.chat.completions.create({
          model: MODEL,
          messages: ask,
          tools: [weatherTool, timeTool],
          tool_choice: 'required',
          seed: 5,
          max_tokens: 200,
          stream: true,
        }),
      );
      const calls = reassembleToolCalls(chunks);
      expect(calls).toHaveLength(1);
      const tool = [weatherTool, timeTool].find((t) => t.function.name === calls[0].name)!;
      expect(tool).toBeDefined();
      expect(calls[0].id).toMatch(/^call_/);
      expect(validates(tool.function.parameters!, JSON.parse(calls[0].arguments))).toBe(true);
      expect(chunks.at(-1)!.choices[0].finish_reason).toBe('tool_calls');
    });

    it('takes a tool result back as history and answers it', async () => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        ...ask,
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temperature": 21}' },
      ];
      const reply = await client.chat.completions.create({
        model: MODEL,
        messages,
        tools: [weatherTool],
        tool_choice: 'none',
        max_tokens: 8,
        temperature: 0,
      });
      expect(reply.choices[0].message.content!.length).toBeGreaterThan(0);
      // The tool's result is part of the prompt the model was given.
      const bare = await client.chat.completions.create({ model: MODEL, messages: ask, max_tokens: 1, temperature: 0 });
      expect(reply.usage!.prompt_tokens).toBeGreaterThan(bare.usage!.prompt_tokens + 10);

      const orphan = client.chat.completions.create({
        model: MODEL,
        messages: [...ask, { role: 'tool', tool_call_id: 'nope', content: 'x' }],
        max_tokens: 4,
      });
      await expect(orphan).rejects.toMatchObject({ status: 400, error: { param: 'messages[1].tool_call_id' } });
    });

    it('refuses a tool choice naming no tool, and an invalid parameters schema, naming its keyword', async () => {
      await expect(
        client.chat.completions.create({
          model: MODEL,
          messages: ask,
          tools: [weatherTool],
          tool_choice: { type: 'function', function: { name: 'other' } },
        }),
      ).rejects.toMatchObject({ status: 400, error: { param: 'tool_choice.function.name' } });
      const patterned: OpenAI.ChatCompletionTool = {
        type: 'function',
        function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string', pattern: '^x(' } } } },
      };
      await expect(
        client.chat.completions.create({ model: MODEL, messages: ask, tools: [patterned] }),
      ).rejects.toMatchObject({
        status: 400,
        error: { code: 'invalid_schema', param: expect.stringContaining('tools[0].function.parameters') },
      });
    });
  });

  describe('structured output', () => {
    const format = {
      type: 'json_schema' as const,
      json_schema: { name: 'person', schema: personSchema, strict: true },
    };

    it('returns JSON that validates against the schema, sync and streamed', async () => {
      for (const seed of [1, 2]) {
        const reply = await client.chat.completions.create({
          model: MODEL,
          messages: ask,
          response_format: format,
          seed,
          temperature: 1,
          max_tokens: 300,
        });
        expect(reply.choices[0].finish_reason).toBe('stop');
        expect(validates(personSchema, JSON.parse(reply.choices[0].message.content!))).toBe(true);
      }
      const chunks = await collect(
        await client.chat.completions.create({
          model: MODEL,
          messages: ask,
          response_format: format,
          seed: 9,
          max_tokens: 300,
          stream: true,
        }),
      );
      const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
      expect(validates(personSchema, JSON.parse(text))).toBe(true);
    });

    it('keeps json_object output a JSON object, even with a small max_tokens', async () => {
      const reply = await client.chat.completions.create({
        model: MODEL,
        messages: ask,
        response_format: { type: 'json_object' },
        seed: 4,
        max_tokens: 40,
      });
      const value = JSON.parse(reply.choices[0].message.content!);
      expect(typeof value).toBe('object');
      expect(Array.isArray(value)).toBe(false);
    });

    it('holds a zod schema with integer bounds (.int(), .min().max()) and a pattern, streamed too', async () => {
      // What z.toJSONSchema writes, as the Vercel AI SDK's Output.object sends it.
      const schema = {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: {
          n: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
          age: { type: 'integer', minimum: 0, maximum: 150 },
          code: { type: 'string', pattern: '^[A-Z]{3}$' },
          ratio: { type: 'number', minimum: 0, maximum: 1 },
        },
        required: ['n', 'age', 'code', 'ratio'],
        additionalProperties: false,
      };
      const zodFormat = { type: 'json_schema' as const, json_schema: { name: 'z', schema, strict: true } };
      for (const seed of [1, 2, 3]) {
        const reply = await client.chat.completions.create({
          model: MODEL,
          messages: ask,
          response_format: zodFormat,
          seed,
          temperature: 1,
          max_tokens: 200,
        });
        expect(validates(schema, JSON.parse(reply.choices[0].message.content!))).toBe(true);
      }
      const chunks = await collect(
        await client.chat.completions.create({
          model: MODEL,
          messages: ask,
          response_format: zodFormat,
          seed: 5,
          temperature: 1,
          max_tokens: 200,
          stream: true,
        }),
      );
      expect(validates(schema, JSON.parse(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')))).toBe(true);
    });

    it('refuses, before queueing, a minItems that max_tokens cannot hold and an enum past the size limit', async () => {
      const huge = { type: 'array', items: { type: 'integer' }, minItems: 1e15 };
      await expect(
        client.chat.completions.create({
          model: MODEL,
          messages: ask,
          max_tokens: 50,
          response_format: { type: 'json_schema', json_schema: { name: 'x', schema: huge } },
        }),
      ).rejects.toMatchObject({ status: 400, error: { code: 'max_tokens_too_small', param: 'max_tokens' } });
      const wide = { enum: Array.from({ length: 100_000 }, (_, i) => `v${i}`) };
      await expect(
        client.chat.completions.create({
          model: MODEL,
          messages: ask,
          response_format: { type: 'json_schema', json_schema: { name: 'x', schema: wide } },
        }),
      ).rejects.toMatchObject({ status: 400, error: { code: 'schema_too_large' } });
    });

    it('refuses an invalid schema keyword with a 400 naming it', async () => {
      const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 'five' } } };
      await expect(
        client.chat.completions.create({
          model: MODEL,
          messages: ask,
          response_format: { type: 'json_schema', json_schema: { name: 's', schema } },
        }),
      ).rejects.toMatchObject({
        status: 400,
        error: { code: 'invalid_schema', param: 'response_format.json_schema.schema.properties.n.minimum' },
      });
    });

    it('holds every line of a batch to the schema', async () => {
      const lines = [1, 2, 3].map((i) => ({
        custom_id: `p${i}`,
        body: { model: MODEL, messages: ask, response_format: format, seed: i, temperature: 1, max_tokens: 300 },
      }));
      const file = await client.files.create({
        file: await toFile(Buffer.from(jsonl(lines)), 'input.jsonl'),
        purpose: 'batch',
      });
      const batch = await client.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      const done = await waitForBatch(client, batch.id);
      expect(done.status).toBe('completed');
      const output = await fileLines<ChatCompletion>(client, done.output_file_id);
      expect(output).toHaveLength(3);
      for (const line of output)
        expect(validates(personSchema, JSON.parse(line.response!.body.choices[0].message.content!))).toBe(true);
    });
  });

  describe('reasoning', () => {
    // The thinking template opens <think> for the reply; a bias toward </think> makes the random model close it.
    const closeId = presetTokenId('think', '</think>');
    const request = (model: string) => ({
      model,
      messages: ask,
      temperature: 1,
      seed: 13,
      max_tokens: 40,
      ignore_eos: true,
      logit_bias: { [String(closeId)]: 3 },
    });

    it('splits the thought segment out as reasoning_content when the deployment parses it, and leaves it in content when not', async () => {
      const off = await client.chat.completions.create(request('think-off'));
      const raw = off.choices[0].message.content!;
      expect(raw).toContain('</think>');
      expect(off.choices[0].message).not.toHaveProperty('reasoning_content');

      const on = await client.chat.completions.create(request('think-on'));
      const message = on.choices[0].message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
      const [thought, ...rest] = raw.split('</think>');
      expect(thought.length).toBeGreaterThan(0);
      expect(message.reasoning_content).toBe(thought);
      expect(message.content).toBe(rest.join('</think>').trimStart());
    });

    it('streams reasoning_content deltas ahead of the content', async () => {
      const chunks = await collect(await client.chat.completions.create({ ...request('think-on'), stream: true }));
      const deltas = chunks.map(
        (c) => c.choices[0]?.delta as { reasoning_content?: string; content?: string | null } | undefined,
      );
      const reasoning = deltas.map((d) => d?.reasoning_content ?? '').join('');
      const content = deltas.map((d) => d?.content ?? '').join('');
      const sync = await client.chat.completions.create(request('think-on'));
      expect(reasoning).toBe((sync.choices[0].message as { reasoning_content?: string }).reasoning_content);
      expect(content).toBe(sync.choices[0].message.content);
      const firstContent = deltas.findIndex((d) => d?.content);
      const lastReasoning = deltas.findLastIndex((d) => d?.reasoning_content);
      if (firstContent >= 0) expect(lastReasoning).toBeLessThan(firstContent);
    });
  });

  describe('sampling extras', () => {
    it('reports logprobs with top alternatives in OpenAI shape, sync and streamed', async () => {
      const reply = await client.chat.completions.create(
        extended({
          model: MODEL,
          messages: ask,
          logprobs: true,
          top_logprobs: 3,
          max_tokens: 6,
          temperature: 0,
          ignore_eos: true,
        }),
      );
      const content = reply.choices[0].logprobs!.content!;
      expect(content).toHaveLength(6);
      for (const token of content) {
        expect(token).toEqual({
          token: expect.any(String),
          logprob: expect.any(Number),
          bytes: expect.any(Array),
          top_logprobs: expect.any(Array),
        });
        expect(token.logprob).toBeLessThanOrEqual(0);
        expect(token.top_logprobs).toHaveLength(3);
        // Greedy: the chosen token is the most likely one.
        expect(token.top_logprobs[0].token).toBe(token.token);
      }
      expect(content.map((t) => t.token).join('')).toBe(reply.choices[0].message.content);

      const chunks = await collect(
        await client.chat.completions.create(
          extendedStream({
            model: MODEL,
            messages: ask,
            logprobs: true,
            top_logprobs: 3,
            max_tokens: 6,
            temperature: 0,
            ignore_eos: true,
            stream: true,
          }),
        ),
      );
      const streamed = chunks.flatMap((c) => c.choices[0]?.logprobs?.content ?? []);
      expect(streamed).toEqual(content);
    });

    it('gives n choices, each with its own index, counted together in usage', async () => {
      const reply = await client.chat.completions.create(
        extended({
          model: MODEL,
          messages: ask,
          n: 3,
          max_tokens: 5,
          temperature: 1,
          ignore_eos: true,
        }),
      );
      expect(reply.choices.map((c) => c.index)).toEqual([0, 1, 2]);
      expect(reply.usage!.completion_tokens).toBe(15);
      expect(new Set(reply.choices.map((c) => c.message.content)).size).toBeGreaterThan(1);

      const chunks = await collect(
        await client.chat.completions.create(
          extendedStream({
            model: MODEL,
            messages: ask,
            n: 3,
            max_tokens: 5,
            ignore_eos: true,
            stream: true,
          }),
        ),
      );
      const finished = chunks.flatMap((c) => c.choices.filter((x) => x.finish_reason).map((x) => x.index));
      expect(finished.sort()).toEqual([0, 1, 2]);
      await expect(client.chat.completions.create({ model: MODEL, messages: ask, n: 5 })).rejects.toMatchObject({
        status: 400,
        error: { param: 'n' },
      });
    });

    it('repeats a sampled reply exactly for the same seed', async () => {
      const body = { model: MODEL, messages: ask, temperature: 1, max_tokens: 16, ignore_eos: true };
      const a = await client.chat.completions.create({ ...body, seed: 42 });
      const b = await client.chat.completions.create({ ...body, seed: 42 });
      const c = await client.chat.completions.create({ ...body, seed: 43 });
      expect(b.choices[0].message.content).toBe(a.choices[0].message.content);
      expect(c.choices[0].message.content).not.toBe(a.choices[0].message.content);
    });

    it('applies logit_bias, and holds the end back until min_tokens', async () => {
      const end = String(presetTokenId('tiny', '<|im_end|>'));
      const ends = await client.chat.completions.create({
        model: MODEL,
        messages: ask,
        temperature: 0,
        max_tokens: 20,
        logit_bias: { [end]: 100 },
      });
      expect(ends.choices[0].finish_reason).toBe('stop');
      expect(ends.usage!.completion_tokens).toBe(1);

      const held = await client.chat.completions.create(
        extended({
          model: MODEL,
          messages: ask,
          temperature: 0,
          max_tokens: 20,
          logit_bias: { [end]: 100 },
          min_tokens: 5,
        }),
      );
      expect(held.choices[0].finish_reason).toBe('stop');
      expect(held.usage!.completion_tokens).toBe(6);

      const banned = await client.chat.completions.create({
        model: MODEL,
        messages: ask,
        temperature: 0,
        max_tokens: 4,
        logprobs: true,
        logit_bias: { '300': 100 },
      });
      const tokens = banned.choices[0].logprobs!.content!.map((t) => t.token);
      expect(new Set(tokens).size).toBe(1);
    });
  });

  describe('context overflow', () => {
    it('refuses a prompt that with max_tokens cannot fit the context, sync and streamed, before any output', async () => {
      const long = [{ role: 'user' as const, content: 'word '.repeat(3000) }];
      await expect(
        client.chat.completions.create({ model: MODEL, messages: long, max_tokens: 8 }),
      ).rejects.toMatchObject({
        status: 400,
        error: { code: 'context_length_exceeded' },
      });
      await expect(
        client.chat.completions.create({ model: MODEL, messages: long, max_tokens: 8, stream: true }),
      ).rejects.toMatchObject({
        status: 400,
        error: { code: 'context_length_exceeded' },
      });
      await expect(
        client.chat.completions.create({ model: MODEL, messages: ask, max_tokens: 4096 }),
      ).rejects.toMatchObject({
        status: 400,
        error: { code: 'context_length_exceeded', param: 'max_tokens' },
      });
    });

    it('ends with finish_reason length when the reply reaches the end of the context', async () => {
      const reply = await client.chat.completions.create(
        extended({
          model: 'think-off',
          messages: ask,
          ignore_eos: true,
          temperature: 0,
        }),
      );
      expect(reply.choices[0].finish_reason).toBe('length');
      expect(reply.usage!.total_tokens).toBe(512);
    });
  });
});
