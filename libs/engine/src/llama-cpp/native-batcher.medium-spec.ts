import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import type { LlamaContext, LlamaModel, Token } from 'node-llama-cpp';
import { ensurePresetModel } from '@conveyor/gguf';
import { runtime } from './llama-runtime.js';
import { NativeBatcher } from './native-batcher.js';
import { nativeContext, nativeSampler, samplerConfig, sequenceId } from './native-context.js';

// The batcher drives node-llama-cpp's native layer itself; node-llama-cpp's own evaluate is the reference.
describe('NativeBatcher against node-llama-cpp evaluate, on the generated tiny model', () => {
  const BATCH = 16;
  let model: LlamaModel;
  let context: LlamaContext;
  let batcher: NativeBatcher;

  beforeAll(async () => {
    const modelPath = await ensurePresetModel('tiny', resolve(import.meta.dirname, '../../../../models'));
    model = await (await runtime(false)).loadModel({ modelPath });
    // A small batch, so a prompt takes several decodes.
    context = await model.createContext({ contextSize: 256, sequences: 4, batchSize: BATCH, threads: 1 });
    batcher = new NativeBatcher(context, nativeContext(context));
  });

  afterAll(async () => {
    await context?.dispose();
    await model?.dispose();
  });

  const prompt = (text: string) => model.tokenize(`<|im_start|>user\n${text}<|im_end|>\n<|im_start|>assistant\n`, true);

  async function reference(tokens: Token[], count: number): Promise<Token[]> {
    const sequence = context.getSequence();
    const out: Token[] = [];
    try {
      for await (const token of sequence.evaluate(tokens, { temperature: 0, yieldEogToken: true })) {
        out.push(token);
        if (out.length >= count) break;
      }
    } finally {
      await sequence.dispose();
    }
    return out;
  }

  async function batched(tokens: Token[], count: number): Promise<Token[]> {
    const sequence = context.getSequence();
    const sampler = nativeSampler(model);
    const native = nativeContext(context);
    const out: Token[] = [];
    try {
      let input = tokens;
      let position = 0;
      while (out.length < count) {
        const token = await batcher.evaluate({
          sequenceId: sequenceId(sequence),
          position,
          tokens: input,
          sample: async (logitIndex) => {
            sampler.applyConfig(samplerConfig({ temperature: 0 }, undefined, undefined));
            return (await native.sampleToken(logitIndex, sampler)) as Token;
          },
        });
        position += input.length;
        out.push(token);
        input = [token];
      }
    } finally {
      sampler.dispose();
      await sequence.dispose();
    }
    return out;
  }

  it('generates what node-llama-cpp does from a prompt several batches long', async () => {
    const tokens = prompt(
      'a prompt long enough to need several decodes of sixteen tokens each, and then some more text',
    );
    expect(tokens.length).toBeGreaterThan(3 * BATCH);
    expect(await batched(tokens, 12)).toEqual(await reference(tokens, 12));
  });

  it('keeps concurrent sequences apart when their tokens share batches', async () => {
    const prompts = ['first', 'the second prompt, a little longer than the first', 'third'].map(prompt);
    const expected = [];
    for (const p of prompts) expected.push(await reference(p, 10));
    expect(await Promise.all(prompts.map((p) => batched(p, 10)))).toEqual(expected);
  });

  it('refuses an evaluation with no tokens instead of decoding an empty batch', async () => {
    await expect(batcher.evaluate({ sequenceId: 0, position: 0, tokens: [], sample: async () => 0 })).rejects.toThrow(
      'Nothing to evaluate',
    );
  });
});
