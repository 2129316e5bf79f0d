import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import type { LlamaContext, LlamaModel, Token } from 'node-llama-cpp';
import { ensurePresetModel } from '@conveyor/gguf';
import { runtime } from './llama-runtime.js';
import { nativeContext, nativeSampler, samplerConfig, sequenceId, type NativeSampler } from './native-context.js';
import { RoundLoop, type LoopReply } from './round-loop.js';

/** A greedy reply of `count` tokens, and nothing else: what the loop itself does, without a reply's logic. */
class GreedyReply implements LoopReply {
  readonly probabilities = false;
  readonly tokens: Token[] = [];
  readonly done: Promise<Token[]>;
  input: readonly Token[];
  fed = 0;
  position = 0;
  ended = false;
  private settle!: (tokens: Token[]) => void;
  private reject!: (err: unknown) => void;

  constructor(
    readonly sequenceId: number,
    prompt: readonly Token[],
    private readonly count: number,
    private readonly sampling: NativeSampler,
  ) {
    this.input = prompt;
    this.done = new Promise((resolve, reject) => ((this.settle = resolve), (this.reject = reject)));
  }

  proceed(): boolean {
    return true;
  }

  decoded(count: number): void {
    this.fed += count;
    this.position += count;
  }

  sampler(): NativeSampler {
    this.sampling.applyConfig(samplerConfig({ temperature: 0 }, undefined, undefined));
    return this.sampling;
  }

  accept(token: Token | null): void {
    this.tokens.push(token as Token);
    if (this.tokens.length < this.count) {
      this.input = [token as Token];
      this.fed = 0;
      return;
    }
    this.ended = true;
    this.settle(this.tokens);
  }

  fail(err: unknown): void {
    this.ended = true;
    this.reject(err);
  }
}

// The loop drives node-llama-cpp's native layer itself; node-llama-cpp's own evaluate is the reference.
describe('RoundLoop against node-llama-cpp evaluate, on the generated tiny model', () => {
  const BATCH = 16;
  let model: LlamaModel;
  let context: LlamaContext;
  let loop: RoundLoop;

  beforeAll(async () => {
    const modelPath = await ensurePresetModel('tiny', resolve(import.meta.dirname, '../../../../models'));
    model = await (await runtime(false)).loadModel({ modelPath });
    // A small batch, so a prompt takes several rounds.
    context = await model.createContext({ contextSize: 256, sequences: 4, batchSize: BATCH, threads: 1 });
    loop = new RoundLoop(context, nativeContext(context));
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

  async function looped(tokens: Token[], count: number): Promise<Token[]> {
    const sequence = context.getSequence();
    const sampler = nativeSampler(model);
    try {
      const reply = new GreedyReply(sequenceId(sequence), tokens, count, sampler);
      loop.add(reply);
      return await reply.done;
    } finally {
      sampler.dispose();
      await sequence.dispose();
    }
  }

  it('generates what node-llama-cpp does from a prompt several rounds long', async () => {
    const tokens = prompt(
      'a prompt long enough to need several decodes of sixteen tokens each, and then some more text',
    );
    expect(tokens.length).toBeGreaterThan(3 * BATCH);
    expect(await looped(tokens, 12)).toEqual(await reference(tokens, 12));
  });

  it('keeps concurrent sequences apart when their tokens share batches', async () => {
    const prompts = ['first', 'the second prompt, a little longer than the first', 'third'].map(prompt);
    const expected = [];
    for (const p of prompts) expected.push(await reference(p, 10));
    expect(await Promise.all(prompts.map((p) => looped(p, 10)))).toEqual(expected);
    expect(loop.size).toBe(0);
  });
});
