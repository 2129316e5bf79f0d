import { describe, expect, it } from '@jest/globals';
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

  it('leaves text, Lark grammars and expressions JavaScript cannot compile to the description', () => {
    for (const format of [
      { type: 'text' },
      undefined,
      { type: 'grammar', syntax: 'lark', definition: 'start: "a"' },
      { type: 'grammar', syntax: 'regex', definition: '(?P<name>a)' },
    ]) {
      expect(inputSchema(format)).toEqual({ type: 'string' });
    }
    expect(custom({ type: 'grammar', syntax: 'lark', definition: 'start: "a"' }).description).toContain('start: "a"');
  });
});
