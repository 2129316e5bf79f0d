import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, Output } from 'ai';
import { z } from 'zod';
import { ChatCompletionRequestDto } from './chat-completion-request.dto.js';
import { checkSchema } from './schema-checks.js';
import { deploymentTraits, IMAGE_LIMITS, jobOf, requestProblem } from '../../../test/support/request-bodies.js';
import { checkGeneration } from './checked-generation.js';

const chat = (body: Record<string, unknown>) =>
  plainToInstance(ChatCompletionRequestDto, {
    model: 'conveyor-tiny',
    messages: [{ role: 'user', content: 'Hi' }],
    ...body,
  });
const check = (body: Record<string, unknown>) => () => checkGeneration(chat(body), deploymentTraits(), IMAGE_LIMITS);
const format = (schema: unknown) => ({ type: 'json_schema', json_schema: { name: 's', schema } });

/** The chat body the Vercel AI SDK sends for `Output.object`, caught at its fetch: nothing leaves the process. */
async function aiSdkBody(schema: z.ZodType): Promise<Record<string, unknown>> {
  let body: Record<string, unknown> = {};
  const fetch = async (_url: unknown, init?: { body?: unknown }) => {
    body = JSON.parse(String(init?.body)) as Record<string, unknown>;
    const message = { role: 'assistant', content: '{"n":3}' };
    const reply = {
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message, finish_reason: 'stop' }],
    };
    return new Response(JSON.stringify(reply), { headers: { 'content-type': 'application/json' } });
  };
  const openai = createOpenAI({
    baseURL: 'http://127.0.0.1:9/v1',
    apiKey: 'x',
    fetch: fetch as typeof globalThis.fetch,
  });
  await generateText({ model: openai.chat('conveyor-tiny'), output: Output.object({ schema }), prompt: 'Hi' });
  return body;
}

describe('checkSchema on request bodies', () => {
  it('accepts the Vercel AI SDK Output.object body with z.number().int()', async () => {
    const body = await aiSdkBody(z.object({ n: z.number().int() }));
    // zod writes .int() as the safe-integer bounds.
    expect(JSON.stringify(body)).toContain('"minimum":-9007199254740991');
    const request = chat({ ...body, model: 'conveyor-tiny' });
    expect(() => checkGeneration(request, deploymentTraits(), IMAGE_LIMITS)).not.toThrow();
    expect(jobOf(request, 'r', deploymentTraits()).responseFormat).toMatchObject({ type: 'json_schema' });
  });

  it('accepts what z.toJSONSchema writes for a schema with most keyword families', () => {
    const schema = z.toJSONSchema(
      z.object({
        id: z.uuid(),
        age: z.number().int().min(0).max(150),
        score: z.number().gt(0).lt(1).multipleOf(0.01),
        code: z.string().regex(/^[A-Z]{3}$/),
        email: z.email(),
        tags: z.array(z.string().min(1)).min(1).max(5),
        kind: z.literal('box'),
        size: z.enum(['s', 'm', 'l']).default('m'),
        extra: z.record(z.string(), z.number()).optional(),
        both: z.object({ a: z.string() }).and(z.object({ b: z.number() })),
        either: z.union([z.string(), z.number().int()]).nullable(),
      }),
    );
    expect(() => checkSchema(schema, 'response_format.json_schema.schema', 4000)).not.toThrow();
    expect(check({ response_format: format(schema), max_tokens: 4000 })).not.toThrow();
  });

  it('refuses an invalid schema with invalid_schema, naming the keyword', () => {
    expect(requestProblem(check({ response_format: format({ type: 'integer', minimum: 'x' }) }))).toMatchObject({
      code: 'invalid_schema',
      param: 'response_format.json_schema.schema.minimum',
    });
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'foo' } } }];
    expect(requestProblem(check({ tools }))).toMatchObject({
      code: 'invalid_schema',
      param: 'tools[0].function.parameters.type',
    });
  });

  // "At once": a check that counted to 1e15, or through every enum value, would not return before jest's
  // timeout, which bounds these tests; how fast it answers is not asserted, as a busy machine varies it.
  it('refuses, at once, a minItems of 1e15 that 50 tokens cannot hold', () => {
    const schema = { type: 'array', items: { type: 'integer' }, minItems: 1e15 };
    expect(requestProblem(check({ response_format: format(schema), max_tokens: 50 }))).toMatchObject({
      code: 'max_tokens_too_small',
      param: 'max_tokens',
    });
    // Tool parameters are held to the context.
    const tools = [
      {
        type: 'function',
        function: { name: 'f', parameters: { type: 'object', properties: { a: schema }, required: ['a'] } },
      },
    ];
    expect(requestProblem(check({ tools }))).toMatchObject({ code: 'max_tokens_too_small' });
  });

  it('refuses a 100,000-value enum as schema_too_large, at once', () => {
    const request = chat({ response_format: format({ enum: Array.from({ length: 100_000 }, (_, i) => i) }) });
    expect(requestProblem(() => checkGeneration(request, deploymentTraits(), IMAGE_LIMITS))).toMatchObject({
      code: 'schema_too_large',
    });
  });
});
