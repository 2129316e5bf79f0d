import { describe, expect, it } from '@jest/globals';
import { repeat } from './gbnf.js';
import { gbnfLiteral, JsonSchema, jsonSchemaGrammar, minimumJsonBytes } from './index.js';

const person: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 2 },
    age: { type: 'integer', minimum: 0 },
    email: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
  },
  required: ['name', 'tags'],
};

describe('minimumJsonBytes', () => {
  it('is the size of the tightest grammar the schema allows', () => {
    expect(minimumJsonBytes({ const: 'abc' })).toBe(5);
    expect(minimumJsonBytes({ type: 'boolean' })).toBe(5);
    expect(minimumJsonBytes({ type: 'string', format: 'uuid' })).toBe(38);
    // Tightest string caps still honour minLength (6 bytes per character: a \uXXXX escape).
    expect(minimumJsonBytes({ type: 'string', minLength: 3 })).toBe(2 + 3 * 6);
    // json_object: the tightest rung is the empty object.
    expect(minimumJsonBytes(null)).toBe(2);
  });

  it('keeps required properties and minItems in the tightest grammar', () => {
    const min = minimumJsonBytes(person);
    // {"name":<2 chars>,"age":<1 digit>,"email":"","tags":[""]}
    expect(min).toBe('{"name":,"age":,"email":,"tags":[]}'.length + (2 + 2 * 6) + 1 + 2 + 2);
    expect(jsonSchemaGrammar(person, min)).not.toBeNull();
    expect(jsonSchemaGrammar(person, min - 1)).toBeNull();
  });

  it('takes a budget of exactly the tightest grammar, however many members an object must have', () => {
    const pair = { type: 'string' };
    for (const schema of [
      { type: 'object', properties: { a: pair, b: pair }, required: ['a', 'b'] },
      { type: 'object', properties: { a: pair, b: pair }, required: ['a', 'b'], minProperties: 2 },
      { type: 'object', properties: { a: pair, b: pair, c: pair }, required: ['a'], minProperties: 2 },
    ] as JsonSchema[]) {
      const least = minimumJsonBytes(schema);
      expect(jsonSchemaGrammar(schema, least)?.maxBytes).toBe(least);
      expect(jsonSchemaGrammar(schema, least - 1)).toBeNull();
    }
  });

  it('returns null for limits below the minimum', () => {
    expect(jsonSchemaGrammar({ const: 'abc' }, 4)).toBeNull();
    expect(jsonSchemaGrammar(null, 1)).toBeNull();
    expect(jsonSchemaGrammar({ type: 'string', format: 'date-time' }, 30)).toBeNull();
    expect(jsonSchemaGrammar({ type: 'string', format: 'date-time' }, 31)?.maxBytes).toBe(31);
  });
});

describe('jsonSchemaGrammar', () => {
  it('grows maxBytes monotonically with the limit and never exceeds it', () => {
    for (const schema of [person, null, true, { type: 'array', items: { type: 'number' } }] as (JsonSchema | null)[]) {
      let previous = 0;
      for (let limit = minimumJsonBytes(schema); limit < 20_000; limit = Math.ceil(limit * 1.3)) {
        const grammar = jsonSchemaGrammar(schema, limit);
        expect(grammar).not.toBeNull();
        expect(grammar!.maxBytes).toBeLessThanOrEqual(limit);
        expect(grammar!.maxBytes).toBeGreaterThanOrEqual(previous);
        previous = grammar!.maxBytes;
      }
    }
  });

  it('caps free sizes but never past the schema maximums', () => {
    const grammar = jsonSchemaGrammar({ type: 'string', maxLength: 10 }, 100_000)!;
    expect(grammar.maxBytes).toBe(2 + 10 * 6);
    expect(jsonSchemaGrammar({ type: 'array', items: { type: 'boolean' }, maxItems: 2 }, 100_000)!.maxBytes).toBe(
      '[false,false]'.length,
    );
  });

  it('emits compact, bounded GBNF: no whitespace rules, no * or +, valid names', () => {
    const { gbnf } = jsonSchemaGrammar(person, 2000)!;
    const lines = gbnf.trim().split('\n');
    expect(lines[0]).toMatch(/^root ::= /);
    for (const line of lines) {
      const [name, body] = line.split(' ::= ');
      expect(name).toMatch(/^[a-z0-9-]+$/);
      // Outside literals and character classes there is no * or + repetition.
      const structure = body.replace(/"(\\.|[^"\\])*"|\[(\\.|[^\]\\])*\]/g, '""');
      expect(structure).not.toMatch(/[*+]/);
    }
    expect(new Set(lines.map((l) => l.split(' ::= ')[0])).size).toBe(lines.length);
  });

  it('splits long repetitions, which llama.cpp refuses past 2000 rules', () => {
    const { gbnf, maxBytes } = jsonSchemaGrammar({ type: 'string', minLength: 2500 }, 100_000)!;
    expect(gbnf).toMatch(/char\{1000\} char\{1000\} char\{500\}/);
    expect(maxBytes).toBe(2 + 2500 * 6);
  });

  it('writes property keys and enum values as ASCII JSON, enum values as a trie', () => {
    const { gbnf } = jsonSchemaGrammar(
      { type: 'object', properties: { café: { enum: ['日本', 'a"b'] } }, required: ['café'] },
      200,
    )!;
    expect(gbnf).toContain(gbnfLiteral('{'));
    expect(gbnf).toContain(gbnfLiteral('"caf\\u00e9":'));
    // Both values open with a quote, written once; then their rests.
    expect(gbnf).toContain(`${gbnfLiteral('"')} (${gbnfLiteral('\\u65e5\\u672c"')} | ${gbnfLiteral('a\\"b"')})`);
  });
});

describe('repeat', () => {
  it('writes counts past 1,000 as chunks and blocks that split each length one way only', () => {
    expect(repeat('x', 0, 1000)).toBe('x{0,1000}');
    expect(repeat('x', 2500, 2500)).toBe('x{1000} x{1000} x{500}');
    expect(repeat('x', 1500, 2200)).toBe('x{1000} x{500} x{0,700}');
    // 16,384 = 128 blocks of 128: fewer than 128 blocks and a part one, or all 128.
    expect(repeat('x', 0, 16384)).toBe('((x{128}){0,127} x{0,127} | (x{128}){128})');
    expect(repeat('x', 1, 4096)).toBe('x ((x{64}){0,62} x{0,63} | (x{64}){63} x{0,63})');
    expect(() => repeat('x', 0, 2_000_000)).toThrow(RangeError);
  });
});

describe('gbnfLiteral', () => {
  it('escapes quotes, backslashes, control and non-ASCII characters', () => {
    expect(gbnfLiteral('a"b\\c')).toBe(String.raw`"a\"b\\c"`);
    expect(gbnfLiteral('\n\t\r\u0001\u007f')).toBe(String.raw`"\n\t\r\x01\x7f"`);
    expect(gbnfLiteral('é😀')).toBe(String.raw`"\u00e9\U0001f600"`);
  });
});
