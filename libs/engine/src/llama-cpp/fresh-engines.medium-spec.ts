import { describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { ensurePresetModel } from '@conveyor/gguf';
import type { ChatTurn } from '@conveyor/queue';
import { LlamaCppEngine, type LlamaCppEngineOptions } from './llama-cpp.engine.js';

// A production worker loads engines again in one process (after a llama-server child restarts, on a
// deployment change), and the prompt cache's exact checks compare one engine's reply with another's: a
// freshly loaded engine must compute what the last one did, to the bit, whatever engines came before it.
// Threads are part of the numbers (2 threads give other last bits than 1 from the second token on), so
// each engine here has the same count.
const SYSTEM = 'You are a careful assistant who answers briefly. '.repeat(40);
const MESSAGES: ChatTurn[] = [
  { role: 'system', content: SYSTEM },
  { role: 'user', content: 'Roll the dice, round 1. '.repeat(8) },
];

/** The greedy logprobs of a fresh engine's first tokens for MESSAGES, the engine disposed after. */
async function logprobs(options: Partial<LlamaCppEngineOptions> = {}): Promise<number[]> {
  const modelPath = await ensurePresetModel('tiny', resolve(import.meta.dirname, '../../../../models'));
  const engine = await LlamaCppEngine.load({
    modelPath,
    contextSize: 4096,
    parallel: 1,
    threads: 1,
    gpu: false,
    promptCache: 'off',
    ...options,
  });
  const seen: number[] = [];
  try {
    await engine.generate(
      { messages: MESSAGES, sampling: { temperature: 0, ignoreEos: true }, maxTokens: 4, stop: [], logprobs: 1 },
      { onStart: () => undefined, onOutput: (p) => seen.push(...(p.logprobs ?? []).map((l) => l.logprob)) },
    );
  } finally {
    await engine.dispose();
  }
  return seen;
}

describe('fresh engines in one process', () => {
  it('agree bit for bit on greedy logprobs, after engines of other settings too', async () => {
    const first = await logprobs();
    expect(first).toHaveLength(4);
    // Engines of other settings in between: flash attention off, two threads, two sequences.
    await logprobs({ flashAttention: 'off' });
    await logprobs({ threads: 2 });
    await logprobs({ parallel: 2 });
    for (let i = 0; i < 2; i++) expect(await logprobs()).toEqual(first);
  }, 120_000);
});
