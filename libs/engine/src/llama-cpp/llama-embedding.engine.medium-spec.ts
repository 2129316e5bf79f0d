import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { ensurePresetModel } from '@conveyor/gguf';
import { EngineInputError } from '../core/generation-engine.js';
import { LlamaEmbeddingEngine } from './llama-embedding.engine.js';

const CONTEXT = 256;

async function inputError(promise: Promise<unknown>): Promise<EngineInputError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof EngineInputError)) throw new Error(`expected an EngineInputError, got ${String(err)}`);
  return err;
}

// The real engine and the generated tiny model (vocabulary 2048, width 128).
describe('LlamaEmbeddingEngine with the generated tiny model', () => {
  let engine: LlamaEmbeddingEngine;

  beforeAll(async () => {
    const modelPath = await ensurePresetModel('tiny', resolve(import.meta.dirname, '../../../../models'));
    engine = await LlamaEmbeddingEngine.load({ modelPath, contextSize: CONTEXT, threads: 1, gpu: false });
  });

  afterAll(async () => {
    await engine?.dispose();
  });

  it('embeds each input as a unit-length vector of the model width, the same input always alike', async () => {
    const { vectors, promptTokens } = await engine.embed(['hello queue', 'something else', 'hello queue']);
    expect(engine.dimensions).toBe(128);
    expect(vectors.map((v) => v.length)).toEqual([128, 128, 128]);
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(vectors[2]).toEqual(vectors[0]);
    expect(vectors[1]).not.toEqual(vectors[0]);
    expect(promptTokens).toBeGreaterThan(3);
  });

  it('embeds token-id inputs, the same ids always alike', async () => {
    const { vectors } = await engine.embed([
      [104, 105],
      [104, 105],
    ]);
    expect(vectors[1]).toEqual(vectors[0]);
  });

  it('refuses token ids outside the vocabulary and inputs past the context before evaluating any', async () => {
    expect(await inputError(engine.embed(['fine', [1, 2048]]))).toMatchObject({
      code: 'invalid_value',
      message: expect.stringMatching(/^input\[1\]\[1\] is 2048/),
    });
    expect(await inputError(engine.embed([[-1]]))).toMatchObject({ code: 'invalid_value' });
    expect(await inputError(engine.embed(['x'.repeat(CONTEXT * 2)]))).toMatchObject({
      code: 'context_length_exceeded',
    });
    expect(await inputError(engine.embed(['']))).toMatchObject({ code: 'invalid_value' });
  });

  it('stops between inputs when its signal fires', async () => {
    const controller = new AbortController();
    controller.abort('cancelled');
    await expect(engine.embed(['a', 'b'], controller.signal)).rejects.toBe('cancelled');
  });
});
