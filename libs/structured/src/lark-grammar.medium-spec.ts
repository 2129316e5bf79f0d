import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import {
  getLlama,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaGrammarEvaluationState,
  LlamaModel,
  TokenBias,
} from 'node-llama-cpp';
import { ensurePresetModel } from '@conveyor/gguf';
import {
  APPLY_PATCH_ENVIRONMENT_GRAMMAR,
  APPLY_PATCH_GRAMMAR,
  isApplyPatch,
} from '../../../test/support/apply-patch-grammar.js';
import { jsonSchemaGrammar, LARK_KEYWORD } from './index.js';

/**
 * A random-weight model, sampled at temperature 1 from every token the grammar allows, writes a
 * custom tool's arguments under the translated Lark grammar in real llama.cpp: whatever it writes must
 * be complete JSON whose input is a well-formed patch, within the byte (and so token) budget.
 */
const SEEDS = [1, 2, 3, 4, 5, 6];
const PROMPT = '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n';

const inputSchema = (definition: string) => ({
  type: 'object',
  properties: { input: { type: 'string', [LARK_KEYWORD]: definition } },
  required: ['input'],
  additionalProperties: false,
});

describe('a translated Lark grammar in llama.cpp with a random model', () => {
  let llama: Llama;
  let model: LlamaModel;
  let context: LlamaContext;
  let sequence: LlamaContextSequence;

  beforeAll(async () => {
    const modelPath = await ensurePresetModel('tiny', resolve('models'));
    llama = await getLlama({ build: 'never', gpu: false });
    model = await llama.loadModel({ modelPath });
    context = await model.createContext({ contextSize: 4096, sequences: 1, threads: 1 });
    sequence = context.getSequence();
  });

  afterAll(async () => {
    await context?.dispose();
    await model?.dispose();
  });

  async function generate(gbnf: string, seed: number, favor?: string): Promise<{ text: string; tokens: number }> {
    const grammar = await llama.createGrammar({ grammar: gbnf });
    const grammarEvaluationState = new LlamaGrammarEvaluationState({ model, grammar });
    await sequence.clearHistory();
    // The random model's logits are large: this bias makes favoured tokens win whenever the grammar allows one.
    const tokenBias = favor
      ? [...favor].reduce((bias, ch) => bias.set(ch, { logit: 1000 }), new TokenBias(model.tokenizer))
      : undefined;
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
      if (tokens.length > 3000) throw new Error('grammar did not end');
    }
    return { text: model.detokenize(tokens), tokens: tokens.length };
  }

  it.each([
    { name: 'apply_patch', definition: APPLY_PATCH_GRAMMAR, budget: 400 },
    { name: 'apply_patch, a larger budget', definition: APPLY_PATCH_GRAMMAR, budget: 2500 },
    // Quotes, backslashes and tabs favoured: lines of code carry them, escaped in the JSON.
    { name: 'apply_patch, escapes favoured', definition: APPLY_PATCH_GRAMMAR, budget: 1200, favor: '"\\\t@' },
    { name: 'apply_patch with environments', definition: APPLY_PATCH_ENVIRONMENT_GRAMMAR, budget: 800 },
  ])('$name: the input is a well-formed patch, within budget', async ({ definition, budget, favor }) => {
    const grammar = jsonSchemaGrammar(inputSchema(definition), budget)!;
    expect(grammar.maxBytes).toBeLessThanOrEqual(budget);
    const inputs: string[] = [];
    for (const seed of SEEDS) {
      const { text, tokens } = await generate(grammar.gbnf, seed, favor);
      const { input } = JSON.parse(text) as { input: string };
      if (!isApplyPatch(input)) throw new Error(`not a patch: ${JSON.stringify(input)}`);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(grammar.maxBytes);
      expect(tokens).toBeLessThanOrEqual(grammar.maxBytes);
      inputs.push(input);
    }
    if (favor) expect(inputs.some((i) => /["\\\t]/.test(i))).toBe(true);
  });

  it("a grammar of Lark's common terminals, with %ignore: the input matches it", async () => {
    const definition = [
      'start: "sum" "(" NUMBER ("," NUMBER)* ")" ["as" ESCAPED_STRING]',
      '%import common.NUMBER',
      '%import common.ESCAPED_STRING',
      '%import common.WS',
      '%ignore WS',
    ].join('\n');
    const number = String.raw`(\d+(\.\d*)?([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?)`;
    const shape = new RegExp(
      String.raw`^sum\s*\(\s*${number}(\s*,\s*${number})*\s*\)(\s*as\s*"([^"\\\n]|\\[^\n])*")?\s*$`,
    );
    const grammar = jsonSchemaGrammar(inputSchema(definition), 600)!;
    for (const seed of SEEDS) {
      const { text } = await generate(grammar.gbnf, seed, '"\\ ');
      const { input } = JSON.parse(text) as { input: string };
      expect(input).toMatch(shape);
    }
  });
});
