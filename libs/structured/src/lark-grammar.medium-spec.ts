import { describe, expect, it } from '@jest/globals';
import {
  APPLY_PATCH_ENVIRONMENT_GRAMMAR,
  APPLY_PATCH_GRAMMAR,
  isApplyPatch,
} from '../../../test/support/apply-patch-grammar.js';
import { useGrammarSampler } from '../../../test/support/grammar-sampler.js';
import { jsonSchemaGrammar, LARK_KEYWORD } from './index.js';

/**
 * A random-weight model, sampled at temperature 1 from every token the grammar allows, writes a
 * custom tool's arguments under the translated Lark grammar in real llama.cpp: whatever it writes must
 * be complete JSON whose input is a well-formed patch, within the byte (and so token) budget.
 */
const SEEDS = [1, 2, 3, 4, 5, 6];

const inputSchema = (definition: string) => ({
  type: 'object',
  properties: { input: { type: 'string', [LARK_KEYWORD]: definition } },
  required: ['input'],
  additionalProperties: false,
});

describe('a translated Lark grammar in llama.cpp with a random model', () => {
  const sampler = useGrammarSampler(4096);
  const generate = (gbnf: string, seed: number, favor?: string) => sampler.generate(gbnf, seed, { favor, limit: 3000 });

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
