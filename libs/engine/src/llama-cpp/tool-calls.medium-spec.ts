import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { ensurePresetModel } from '@conveyor/gguf';
import type { ToolCall, ToolSpec } from '@conveyor/queue';
import type { GenerateRequest, GenerateResult, OutputPiece } from '../core/generation-engine.js';
import { LlamaCppEngine } from './llama-cpp.engine.js';

/** Functions without parameters and with one-letter names: a call is 4 or 5 generated tokens, a further one needs 6. */
const NO_ARGS = { type: 'object', properties: {}, additionalProperties: false };
const short: ToolSpec[] = [
  { name: 'a', parameters: NO_ARGS },
  { name: 'b', parameters: NO_ARGS },
];
const weather: ToolSpec = {
  name: 'get_weather',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['celsius', 'fahrenheit'] } },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
};

const ask = (over: Partial<GenerateRequest>): GenerateRequest => ({
  messages: [{ role: 'user', content: 'Which tools?' }],
  sampling: { temperature: 0 },
  maxTokens: 64,
  stop: [],
  ...over,
});

interface Run {
  result: GenerateResult;
  pieces: OutputPiece[];
  calls: ToolCall[];
}

// The generated tiny model's template (Qwen-style) writes several <tool_call> blocks in one reply.
describe('LlamaCppEngine: several tool calls in one reply', () => {
  let engine: LlamaCppEngine;

  const run = async (request: GenerateRequest): Promise<Run> => {
    const pieces: OutputPiece[] = [];
    const result = await engine.generate(request, { onStart: () => undefined, onOutput: (p) => pieces.push(p) });
    const calls: ToolCall[] = [];
    for (const { toolCall: c } of pieces) {
      if (!c) continue;
      const call = (calls[c.index] ??= { id: '', name: '', arguments: '' });
      call.id ||= c.id ?? '';
      call.name ||= c.name ?? '';
      call.arguments += c.arguments;
    }
    return { result, pieces, calls };
  };

  beforeAll(async () => {
    const modelPath = await ensurePresetModel('tiny', resolve(import.meta.dirname, '../../../../models'));
    engine = await LlamaCppEngine.load({ modelPath, contextSize: 1024, parallel: 2, threads: 1, gpu: false });
  });

  afterAll(async () => {
    await engine?.dispose();
  });

  it('makes calls while the reply may not end and another fits: exactly two in 12 tokens', async () => {
    // Call one leaves 7 or 8 of 12 tokens (a further call needs 6); call two leaves at most 4.
    const { result, pieces, calls } = await run(
      ask({ tools: short, toolChoice: 'required', sampling: { temperature: 0, ignoreEos: true }, maxTokens: 12 }),
    );
    expect(result.finishReason).toBe('tool_calls');
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(['a', 'b']).toContain(call.name);
      expect(JSON.parse(call.arguments)).toEqual({});
      expect(call.id).toMatch(/^call_[0-9a-f]{24}$/);
    }
    expect(calls[0]!.id).not.toBe(calls[1]!.id);
    // Streamed in order: each call's first piece carries its id and name, later ones only arguments.
    const order = pieces.flatMap((p) => (p.toolCall ? [p.toolCall] : []));
    expect(order.map((c) => c.index)).toEqual([...order.map((c) => c.index)].sort((x, y) => x - y));
    for (const index of [0, 1]) {
      const own = order.filter((c) => c.index === index);
      expect(own[0]).toMatchObject({ id: calls[index]!.id, name: calls[index]!.name });
      expect(own.slice(1).every((c) => c.id === undefined && c.name === undefined)).toBe(true);
    }
  });

  it('makes one call with parallelToolCalls false, and one of a named function', async () => {
    const base = ask({ tools: short, toolChoice: 'required', sampling: { temperature: 0, ignoreEos: true } });
    const single = await run({ ...base, parallelToolCalls: false });
    expect(single.result.finishReason).toBe('tool_calls');
    expect(single.calls).toHaveLength(1);
    const named = await run({ ...base, toolChoice: { name: 'b' } });
    expect(named.result.finishReason).toBe('tool_calls');
    expect(named.calls.map((c) => c.name)).toEqual(['b']);
  });

  it('holds every call of the only tool to its schema, and stops offering calls that would not fit', async () => {
    const { result, calls } = await run(
      ask({ tools: [weather], toolChoice: 'required', sampling: { temperature: 0, ignoreEos: true }, maxTokens: 160 }),
    );
    // Every call completes: none is cut off by the budget.
    expect(result.finishReason).toBe('tool_calls');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const call of calls) {
      expect(call.name).toBe('get_weather');
      const args = JSON.parse(call.arguments) as { city: string; unit: string };
      expect(Object.keys(args).sort()).toEqual(['city', 'unit']);
      expect(['celsius', 'fahrenheit']).toContain(args.unit);
    }
    expect(new Set(calls.map((c) => c.id)).size).toBe(calls.length);
  });

  it('lets the model choose whether to go on once it may end (min_tokens forces a second call only)', async () => {
    // After a call the random model puts nearly all weight on ending; a hot sampler sometimes goes on.
    const counts: number[] = [];
    for (const seed of [13, 20, 22]) {
      const { result, calls } = await run(
        ask({ tools: short, toolChoice: 'required', sampling: { temperature: 4, seed, minTokens: 6 }, maxTokens: 48 }),
      );
      expect(result.finishReason).toBe('tool_calls');
      for (const call of calls) expect(JSON.parse(call.arguments)).toEqual({});
      counts.push(calls.length);
    }
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(2);
    expect(Math.max(...counts)).toBeGreaterThan(2);
  });

  it('repeats a reply with several calls exactly, within its budget', async () => {
    const request = ask({
      tools: short,
      toolChoice: 'required',
      sampling: { temperature: 0, ignoreEos: true },
      maxTokens: 12,
    });
    const first = await run(request);
    const again = await run(request);
    // Greedy and alone on the context: the same calls, the same count.
    expect(again.calls.map((c) => c.name)).toEqual(first.calls.map((c) => c.name));
    expect(again.result.usage.completionTokens).toBe(first.result.usage.completionTokens);
    expect(first.result.usage.completionTokens).toBeLessThanOrEqual(12);
  });

  it("with a response format beside the tools, answers with the format's JSON or calls: never free text", async () => {
    const format = {
      type: 'json_schema' as const,
      name: 'verdict',
      schema: {
        type: 'object',
        properties: { answer: { type: 'string', maxLength: 8 }, score: { type: 'integer', minimum: 0, maximum: 9 } },
        required: ['answer', 'score'],
        additionalProperties: false,
      },
    };
    const outcomes = new Set<string>();
    for (let seed = 1; seed <= 8; seed++) {
      const { result, pieces, calls } = await run(
        ask({ tools: [weather], responseFormat: format, sampling: { temperature: 1, seed }, maxTokens: 160 }),
      );
      if (calls.length) {
        expect(result.finishReason).toBe('tool_calls');
        expect(calls[0]!.name).toBe('get_weather');
        outcomes.add('call');
        continue;
      }
      const text = pieces.map((p) => p.text ?? '').join('');
      expect({ finishReason: result.finishReason, text }).toEqual({ finishReason: 'stop', text });
      const value = JSON.parse(text) as { answer: string; score: number };
      expect(Object.keys(value).sort()).toEqual(['answer', 'score']);
      expect(Number.isInteger(value.score) && value.score >= 0 && value.score <= 9).toBe(true);
      outcomes.add('json');
    }
    expect(outcomes.size).toBeGreaterThan(0);
  });
});
