import { describe, expect, it } from '@jest/globals';
import { LARK_KEYWORD } from '@conveyor/structured';
import { APPLY_PATCH_GRAMMAR } from '../../../test/support/apply-patch-grammar.js';
import { CUSTOM_INPUT, offeredTools } from './response-tool-list.js';

const custom = (format: unknown) => offeredTools([{ type: 'custom', name: 't', format }])[0]!;
const inputSchema = (format: unknown) =>
  (custom(format).parameters as { properties: Record<string, Record<string, unknown>> }).properties[CUSTOM_INPUT];

describe('offeredTools: a custom tool as a function of one string', () => {
  it('holds a regular-expression format as the input pattern, matched whole', () => {
    expect(inputSchema({ type: 'grammar', syntax: 'regex', definition: '[a-z]+' })).toEqual({
      type: 'string',
      pattern: '^(?:[a-z]+)$',
    });
    expect(inputSchema({ type: 'grammar', syntax: 'regex', definition: '^a|b$' })?.pattern).toBe('^(?:a|b)$');
  });

  it("holds a Lark grammar the grammar can write (Codex's apply_patch) as the input's Lark keyword, and describes it", () => {
    const format = { type: 'grammar', syntax: 'lark', definition: APPLY_PATCH_GRAMMAR };
    expect(inputSchema(format)).toEqual({ type: 'string', [LARK_KEYWORD]: APPLY_PATCH_GRAMMAR });
    expect(custom(format).description).toContain(APPLY_PATCH_GRAMMAR);
  });

  it('leaves text, Lark grammars outside the subset and expressions JavaScript cannot compile to the description', () => {
    const recursive = 'start: "(" start ")" | "x"';
    for (const format of [
      { type: 'text' },
      undefined,
      { type: 'grammar', syntax: 'lark', definition: recursive },
      { type: 'grammar', syntax: 'lark', definition: 'start: /(?=a)a/' },
      { type: 'grammar', syntax: 'regex', definition: '(?P<name>a)' },
    ]) {
      expect(inputSchema(format)).toEqual({ type: 'string' });
    }
    expect(custom({ type: 'grammar', syntax: 'lark', definition: recursive }).description).toContain(recursive);
  });
});
