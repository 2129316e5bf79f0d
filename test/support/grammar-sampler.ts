import { afterAll, beforeAll } from '@jest/globals';
import { resolve } from 'node:path';
import {
  getLlama,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaGrammarEvaluationState,
  LlamaModel,
  Token,
  TokenBias,
} from 'node-llama-cpp';
import { ensurePresetModel } from '@conveyor/gguf';

const PROMPT = '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n';

export interface SampleOptions {
  /** Characters whose tokens win whenever the grammar allows one (rare branches, such as escapes). */
  favor?: string;
  /** Characters whose tokens (every token holding one) lose whenever the grammar allows another. */
  avoid?: string;
  /** Tokens past which the grammar is taken never to end. */
  limit?: number;
}

export interface GrammarSampler {
  /** llama.cpp's own reading of `gbnf` (it refuses a grammar it cannot build). */
  createGrammar(gbnf: string): Promise<unknown>;
  /** What the model writes under `gbnf` from a fresh sequence, sampled with `seed`. */
  generate(gbnf: string, seed: number, options?: SampleOptions): Promise<{ text: string; tokens: number }>;
}

/**
 * The random-weight test model in real llama.cpp, loaded once for a spec file, sampled at temperature 1
 * with topK and topP off: every token the grammar allows may come, the most adversarial case for a
 * grammar that must bound and shape what is written.
 */
export function useGrammarSampler(contextSize: number): GrammarSampler {
  let llama: Llama;
  let model: LlamaModel;
  let context: LlamaContext | undefined;
  let sequence: LlamaContextSequence;

  beforeAll(async () => {
    const modelPath = await ensurePresetModel('tiny', resolve('models'));
    llama = await getLlama({ build: 'never', gpu: false });
    model = await llama.loadModel({ modelPath });
    context = await model.createContext({ contextSize, sequences: 1, threads: 1 });
    sequence = context.getSequence();
  });

  afterAll(async () => {
    await context?.dispose();
    await model?.dispose();
  });

  return {
    createGrammar: (gbnf) => llama.createGrammar({ grammar: gbnf }),
    async generate(gbnf, seed, { favor, avoid, limit = 2000 } = {}) {
      const grammar = await llama.createGrammar({ grammar: gbnf });
      const grammarEvaluationState = new LlamaGrammarEvaluationState({ model, grammar });
      await sequence.clearHistory();
      // One character at a time, so each gets its byte tokens rather than a merged one. The random
      // model's logits are large: this bias makes favoured tokens win whenever the grammar allows one.
      let tokenBias = favor
        ? [...favor].reduce((bias, ch) => bias.set(ch, { logit: 1000 }), new TokenBias(model.tokenizer))
        : undefined;
      if (avoid) {
        tokenBias ??= new TokenBias(model.tokenizer);
        const vocabulary = (model.fileInfo.metadata.tokenizer?.ggml?.tokens as unknown[]).length;
        for (let token = 0; token < vocabulary; token++)
          if ([...avoid].some((ch) => model.detokenize([token as Token]).includes(ch)))
            tokenBias.set(token as Token, { logit: -1e6 });
      }
      const tokens = [];
      for await (const token of sequence.evaluate(model.tokenize(PROMPT, true), {
        temperature: 1,
        topK: 0,
        topP: 1,
        seed,
        grammarEvaluationState,
        tokenBias,
      })) {
        tokens.push(token);
        if (tokens.length > limit) throw new Error('grammar did not end');
      }
      return { text: model.detokenize(tokens), tokens: tokens.length };
    },
  };
}
