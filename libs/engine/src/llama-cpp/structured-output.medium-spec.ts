import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ensurePresetModel } from '@conveyor/gguf';
import { checkJson } from '@conveyor/structured';
import { EngineOutputError, type GenerateRequest, type OutputPiece } from '../core/generation-engine.js';
import { LlamaCppEngine } from './llama-cpp.engine.js';

/** What zod 4 writes for integer fields (the Vercel AI SDK's Output.object sends the same). */
const zodSchema = z.toJSONSchema(
  z.object({
    n: z.number().int(),
    age: z.number().int().min(0).max(150),
    offset: z.number().int().min(-40).max(1000),
    stars: z.number().int().min(1).max(5),
  }),
) as Record<string, unknown>;

const ask = (schema: Record<string, unknown>, seed: number): GenerateRequest => ({
  messages: [{ role: 'user', content: 'Some JSON, please.' }],
  sampling: { temperature: 1, seed },
  maxTokens: 120,
  stop: [],
  responseFormat: { type: 'json_schema', name: 's', schema },
});

describe('LlamaCppEngine: structured output checked on the result', () => {
  let engine: LlamaCppEngine;

  const run = async (request: GenerateRequest) => {
    const pieces: OutputPiece[] = [];
    const result = await engine.generate(request, { onStart: () => undefined, onOutput: (p) => pieces.push(p) });
    return { result, text: pieces.map((p) => p.text ?? '').join(''), pieces };
  };

  beforeAll(async () => {
    const modelPath = await ensurePresetModel('tiny', resolve(import.meta.dirname, '../../../../models'));
    engine = await LlamaCppEngine.load({ modelPath, contextSize: 1024, parallel: 2, threads: 1, gpu: false });
  });

  afterAll(async () => {
    await engine?.dispose();
  });

  it('writes valid JSON for a zod schema with integer bounds, on any seed', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { text, result } = await run(ask(zodSchema, seed));
      expect(result.finishReason).toBe('stop');
      expect(checkJson(JSON.parse(text), zodSchema)).toBeNull();
    }
  });

  it('sends a checked reply once it passed its check, its pieces counted as they were generated', async () => {
    const { pieces, text, result } = await run(ask(zodSchema, 9));
    expect(checkJson(JSON.parse(text), zodSchema)).toBeNull();
    const counts = pieces.flatMap((p) => (p.tokens === undefined ? [] : [p.tokens]));
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBeLessThanOrEqual(result.usage.completionTokens);
  });

  it('runs a reply that fails its check again once, then fails with schema_not_met', async () => {
    // The grammar cannot hold the pattern; a random model does not write this by chance.
    const schema = { type: 'string', maxLength: 8, pattern: '^only-me$' };
    const pieces: OutputPiece[] = [];
    await expect(
      engine.generate(ask(schema, 1), { onStart: () => undefined, onOutput: (p) => pieces.push(p) }),
    ).rejects.toThrow(EngineOutputError);
    // Nothing of a non-conforming reply was sent.
    expect(pieces.filter((p) => p.text)).toEqual([]);
    // The sequence is usable afterwards.
    const { text } = await run(ask(zodSchema, 11));
    expect(checkJson(JSON.parse(text), zodSchema)).toBeNull();
  });

  /** A forced call of one tool whose parameters are `parameters`. */
  const call = (parameters: Record<string, unknown>, seed: number): GenerateRequest => ({
    messages: [{ role: 'user', content: 'Call the tool.' }],
    sampling: { temperature: 1, seed },
    maxTokens: 120,
    stop: [],
    tools: [{ name: 'pick', description: 'Picks.', parameters }],
    toolChoice: 'required',
    parallelToolCalls: false,
  });
  const callsOf = (pieces: OutputPiece[]) =>
    pieces
      .flatMap((p) => (p.toolCall ? [p.toolCall] : []))
      .reduce<string[]>((args, d) => {
        args[d.index] = (args[d.index] ?? '') + d.arguments;
        return args;
      }, []);

  it("checks a call's arguments where the grammar cannot hold its parameters, sending only conforming calls", async () => {
    // `not` is checked on the result: a random model's digits fail it about half the time.
    const parameters = {
      type: 'object',
      properties: { n: { type: 'integer', minimum: 0, maximum: 9, not: { enum: [0, 1, 2, 3, 4] } } },
      required: ['n'],
      additionalProperties: false,
    };
    let passed = 0;
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const pieces: OutputPiece[] = [];
      const outcome = await engine
        .generate(call(parameters, seed), { onStart: () => undefined, onOutput: (p) => pieces.push(p) })
        .then(
          (result) => result.finishReason,
          (err: unknown) => err,
        );
      if (outcome instanceof EngineOutputError) {
        expect(outcome.code).toBe('schema_not_met');
        expect(outcome.message).toMatch(/call 0 \(pick\)/);
        // Nothing of a non-conforming call was sent.
        expect(pieces.filter((p) => p.toolCall)).toEqual([]);
        continue;
      }
      expect(outcome).toBe('tool_calls');
      for (const args of callsOf(pieces)) expect(checkJson(JSON.parse(args), parameters)).toBeNull();
      passed++;
    }
    // Half the digits pass: two tries pass for most seeds.
    expect(passed).toBeGreaterThan(0);
  });

  it('runs a call that fails its check again once, then fails with schema_not_met', async () => {
    const parameters = {
      type: 'object',
      properties: { code: { type: 'string', maxLength: 8, pattern: '^only-me$' } },
      required: ['code'],
      additionalProperties: false,
    };
    const pieces: OutputPiece[] = [];
    const failure = await engine
      .generate(call(parameters, 3), { onStart: () => undefined, onOutput: (p) => pieces.push(p) })
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(EngineOutputError);
    expect((failure as EngineOutputError).message).toMatch(/tool calls' arguments did not conform.*twice/);
    expect(pieces.filter((p) => p.toolCall)).toEqual([]);
  });
});
