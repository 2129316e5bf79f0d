import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { ensurePresetModel } from '@conveyor/gguf';
import { EngineInputError } from '../core/generation-engine.js';
import { LlamaRankingEngine } from './llama-ranking.engine.js';

const CONTEXT = 256;
const QUERY = 'the capital of France';
const DOCUMENTS = [
  'The cat sat on the mat.',
  'Paris is the capital of France.',
  'Bananas are yellow.',
  'A quiet town.',
];

// The real engine and the generated reranker (the `rerank` preset: random weights, so the scores mean
// nothing, but they are the model's own, and stable).
describe('LlamaRankingEngine with the generated reranker', () => {
  let engine: LlamaRankingEngine;

  beforeAll(async () => {
    const modelPath = await ensurePresetModel('rerank', resolve(import.meta.dirname, '../../../../models'));
    engine = await LlamaRankingEngine.load({ modelPath, contextSize: CONTEXT, threads: 1, gpu: false });
  });

  afterAll(async () => {
    await engine?.dispose();
  });

  it('scores each document between 0 and 1, different documents differently, the same ones alike every time', async () => {
    const first = await engine.rank(QUERY, DOCUMENTS);
    expect(first.scores).toHaveLength(DOCUMENTS.length);
    for (const score of first.scores) {
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(1);
    }
    expect(new Set(first.scores).size).toBe(DOCUMENTS.length);
    const again = await engine.rank(QUERY, [...DOCUMENTS].reverse());
    expect(again.scores).toEqual([...first.scores].reverse());
    expect(again.promptTokens).toBe(first.promptTokens);
    // Each pair counts the query, the document and the special tokens around them.
    expect(first.promptTokens).toBeGreaterThan(DOCUMENTS.length * 4);
  });

  it('refuses a document that cannot fit beside the query before evaluating any', async () => {
    const err = await engine.rank(QUERY, ['short', 'x '.repeat(CONTEXT * 2)]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(EngineInputError);
    expect((err as EngineInputError).message).toMatch(/documents\[1\].*does not fit/);
  });
});
