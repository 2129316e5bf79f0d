import { afterEach, describe, expect, it } from '@jest/globals';
import { EngineInputError, type GenerateRequest, type OutputPiece } from '../core/generation-engine.js';
import { SimulatedEngine, type SimulatedEngineOptions } from './simulated.engine.js';
import { simulatedPromptTokens } from './simulated-text.js';

const engines: SimulatedEngine[] = [];
const engine = (options: Partial<SimulatedEngineOptions> = {}) => {
  const e = new SimulatedEngine({
    ttftMs: 40,
    tpotMs: 10,
    outputTokens: 6,
    text: 'one two three',
    contextSize: 256,
    sequences: 4,
    ...options,
  });
  engines.push(e);
  return e;
};
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.dispose()));
});

const request = (fields: Partial<GenerateRequest> = {}): GenerateRequest => ({
  messages: [{ role: 'user', content: 'twelve bytes' }],
  sampling: { temperature: 0 },
  stop: [],
  ...fields,
});

/** Runs one request, recording each piece and when it came (ms since the call). */
async function run(e: SimulatedEngine, r: GenerateRequest) {
  const started = performance.now();
  const pieces: Array<OutputPiece & { at: number; when: number }> = [];
  let promptTokens = -1;
  const result = await e.generate(r, {
    onStart: (n) => (promptTokens = n),
    onOutput: (p) => pieces.push({ ...p, at: performance.now() - started, when: performance.now() }),
  });
  const text = (choice = 0) =>
    pieces
      .filter((p) => p.choice === choice)
      .map((p) => p.text ?? '')
      .join('');
  return { result, pieces, text, promptTokens };
}

describe('SimulatedEngine', () => {
  it('runs to max_tokens exactly, at the configured pace, and counts usage exactly', async () => {
    const { result, pieces, text, promptTokens } = await run(engine(), request({ maxTokens: 5 }));
    expect(text()).toBe('one two three one two');
    expect(result).toEqual({
      finishReason: 'length',
      finishReasons: ['length'],
      usage: { promptTokens: 3, completionTokens: 5 },
      aborted: false,
    });
    expect(promptTokens).toBe(3);
    expect(pieces.map((p) => p.tokens)).toEqual([1, 2, 3, 4, 5]);
    // First token no sooner than ttft (40 ms), then one each tpot (10 ms). Only the floors are asserted: a
    // busy machine makes every timer late, so how close to plan it keeps is for bench/ to measure.
    expect(pieces[0]!.at).toBeGreaterThanOrEqual(38);
    // Rounds keep to their plan (a late one does not push the next ones back): token 5 is due at 40 + 4 × 10 ms.
    expect(pieces[4]!.at).toBeGreaterThanOrEqual(78);
  });

  it('ends by itself after outputTokens when the request sets no max_tokens, and not with ignore_eos', async () => {
    const natural = await run(engine({ tpotMs: 1, ttftMs: 0 }), request());
    expect(natural.result.finishReason).toBe('stop');
    expect(natural.result.usage.completionTokens).toBe(6);
    const longer = await run(
      engine({ tpotMs: 1, ttftMs: 0 }),
      request({ maxTokens: 9, sampling: { temperature: 0, ignoreEos: true } }),
    );
    expect(longer.result).toMatchObject({ finishReason: 'length', usage: { completionTokens: 9 } });
  });

  it('ends at a stop string, which the client never sees', async () => {
    const { result, text } = await run(engine({ tpotMs: 1, ttftMs: 0 }), request({ stop: [' thr'] }));
    expect(text()).toBe('one two');
    expect(result).toMatchObject({ finishReason: 'stop', stopSequences: [' thr'], usage: { completionTokens: 3 } });
    const natural = await run(engine({ tpotMs: 1, ttftMs: 0 }), request({ stop: ['never said'] }));
    expect(natural.result.finishReason).toBe('stop');
    expect(natural.result.stopSequences).toBeUndefined();
  });

  it('generates n choices of each prompt, and sums their usage', async () => {
    const e = engine({ tpotMs: 1, ttftMs: 0 });
    const { result, text } = await run(e, request({ n: 2, maxTokens: 2 }));
    expect([text(0), text(1)]).toEqual(['one two', 'one two']);
    expect(result.finishReasons).toEqual(['length', 'length']);
    expect(result.usage.completionTokens).toBe(4);
    const raw = await run(e, request({ messages: [], prompts: ['abcd', 'abcdefgh'], maxTokens: 1 }));
    expect(raw.result.usage).toEqual({ promptTokens: 3, completionTokens: 2 });
    await expect(e.generate(request({ n: 5 }), { onStart: () => {}, onOutput: () => {} })).rejects.toThrow(
      EngineInputError,
    );
  });

  it('refuses a prompt the context cannot hold', async () => {
    const e = engine({ contextSize: 64 });
    const long = request({ messages: [{ role: 'user', content: 'x'.repeat(300) }] });
    await expect(e.generate(long, { onStart: () => {}, onOutput: () => {} })).rejects.toMatchObject({
      code: 'context_length_exceeded',
    });
    await expect(e.generate(request({ maxTokens: 62 }), { onStart: () => {}, onOutput: () => {} })).rejects.toThrow(
      /does not fit/,
    );
  });

  it('cuts a budget clamped to the context to the room the prompt leaves, and runs to the end of it', async () => {
    const e = engine({ contextSize: 8 });
    const { result } = await run(
      e,
      request({ maxTokens: 32000, clampToContext: true, sampling: { temperature: 0, ignoreEos: true } }),
    );
    expect(result.finishReasons).toEqual(['length']);
    expect(result.usage.promptTokens + result.usage.completionTokens).toBe(8);
    const long = request({ messages: [{ role: 'user', content: 'x'.repeat(300) }], clampToContext: true });
    await expect(e.generate(long, { onStart: () => {}, onOutput: () => {} })).rejects.toMatchObject({
      code: 'context_length_exceeded',
    });
  });

  it('stops when its signal fires, with what it generated so far', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 80);
    const { result } = await run(engine({ contextSize: 1024 }), request({ maxTokens: 500, signal: controller.signal }));
    expect(result.aborted).toBe(true);
    expect(result.usage.completionTokens).toBeGreaterThan(0);
    // Fewer than asked for: it stopped at the signal, however late a busy machine fired it.
    expect(result.usage.completionTokens).toBeLessThan(500);
  });

  it('continues a reply from the tokens already sent, counting them against the budget', async () => {
    const { result, text } = await run(
      engine({ tpotMs: 1, ttftMs: 0 }),
      request({ maxTokens: 5, continueFrom: { text: 'one two', tokens: 2 } }),
    );
    expect(text()).toBe(' three one two');
    expect(result.usage.completionTokens).toBe(5);
  });

  it('reports each token as certain when log-probabilities are asked for', async () => {
    const { pieces } = await run(engine({ tpotMs: 1, ttftMs: 0 }), request({ maxTokens: 1, logprobs: 2 }));
    expect(pieces[0]!.logprobs).toEqual([
      { token: 'one', logprob: 0, bytes: [111, 110, 101], top: [{ token: 'one', logprob: 0, bytes: [111, 110, 101] }] },
    ]);
  });

  it('decodes in lock-step: running replies produce their tokens in the same rounds', async () => {
    const e = engine({ ttftMs: 0, tpotMs: 20 });
    const first = run(e, request({ maxTokens: 6 }));
    await new Promise((r) => setTimeout(r, 7));
    const second = run(e, request({ maxTokens: 3 }));
    const [a, b] = await Promise.all([first, second]);
    // The later reply joins the next round and then shares every round with the first: each of its tokens
    // came in the same timer callback as one of the first's, well within half a round (10 ms) of it.
    expect(b.pieces).toHaveLength(3);
    for (const piece of b.pieces) expect(a.pieces.some((p) => Math.abs(p.when - piece.when) < 10)).toBe(true);
  });
});

describe('simulatedPromptTokens', () => {
  it('counts a prompt as its UTF-8 bytes over 4, rounded up, at least 1', () => {
    expect(simulatedPromptTokens({ messages: [{ role: 'user', content: 'é'.repeat(4) }] })).toEqual([2]);
    expect(simulatedPromptTokens({ messages: [{ role: 'user', content: '' }] })).toEqual([1]);
    expect(simulatedPromptTokens({ messages: [], prompts: ['12345', ''] })).toEqual([2, 1]);
  });
});
