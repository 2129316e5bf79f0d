import { describe, expect, it } from '@jest/globals';
import { repeat } from './gbnf.js';
import {
  gbnfLiteral,
  JsonSchema,
  jsonSchemaGrammar,
  MAX_GRAMMAR_CHARS,
  minimumJsonBytes,
  UnsupportedSchemaError,
} from './index.js';
import { grammarSize } from './json-grammar.js';

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
    // A budget below the next rung's 2048 characters: the string is its 2500 required ones.
    const { gbnf, maxBytes } = jsonSchemaGrammar({ type: 'string', minLength: 2500 }, 20_000)!;
    expect(gbnf).toMatch(/char\{1000\} char\{1000\} char\{500\} "/);
    expect(maxBytes).toBe(2 + 2500 * 6);
    // Optional characters past 1000 come in blocks: fewer than q whole ones and a part, or q and the rest.
    const long = jsonSchemaGrammar({ type: 'string', minLength: 2500 }, 100_000)!;
    expect(long.gbnf).toContain(
      'char{1000} char{1000} char{500} ((char{118}){0,116} char{0,117} | (char{118}){117} char{0,78})',
    );
    expect(long.maxBytes).toBe(2 + 16384 * 6);
    for (const line of long.gbnf.split('\n'))
      for (const [, lo, hi] of line.matchAll(/\{(\d+)(?:,(\d+))?\}/g))
        expect(Number(hi ?? lo)).toBeLessThanOrEqual(1000);
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

describe('free strings', () => {
  const longest = (schema: JsonSchema, budget: number) => {
    const grammar = jsonSchemaGrammar(schema, budget)!;
    const caps = [...grammar.gbnf.matchAll(/^string-(\d+) ::=/gm)].map(([, n]) => Number(n));
    return { maxBytes: grammar.maxBytes, chars: Math.max(...caps) };
  };
  const writeFile = (path: JsonSchema): JsonSchema => ({
    type: 'object',
    properties: { path, content: { type: 'string' } },
    required: ['path', 'content'],
    additionalProperties: false,
  });
  const tool = writeFile({ type: 'string' });

  it('run past 256 characters when the budget allows, as far as the budget allows', () => {
    expect(longest({ type: 'string' }, 1_000).chars).toBe(128);
    expect(longest({ type: 'string' }, 4_096).chars).toBe(512);
    expect(longest({ type: 'string' }, 32_768).chars).toBe(4096);
    expect(longest({ type: 'string' }, 131_072)).toEqual({ chars: 16384, maxBytes: 2 + 16384 * 6 });
    // A tool's arguments: two free strings share the budget.
    expect(longest(tool, 32_768).chars).toBe(2048);
    expect(longest(tool, 200_000).chars).toBe(16384);
    // A short argument bounded by its schema leaves the long one the room.
    expect(longest(writeFile({ type: 'string', maxLength: 256 }), 32_768).chars).toBe(4096);
  });

  it('share the budget when there are many, and never take more than it', () => {
    const many: JsonSchema = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field${i}`, { type: 'string' }])),
      required: Array.from({ length: 40 }, (_, i) => `field${i}`),
    };
    const seen = [2_000, 8_000, 32_768, 131_072, 1_000_000].map((budget) => {
      const { chars, maxBytes } = longest(many, budget);
      expect(maxBytes).toBeLessThanOrEqual(budget);
      return chars;
    });
    // 1,000,000 bytes for 40 strings: 25,000 each, room for 4,096 characters (24,578 bytes) but not 8,192.
    expect(seen).toEqual([4, 24, 128, 512, 4096]);
    const least = minimumJsonBytes(many);
    expect(jsonSchemaGrammar(many, least)!.maxBytes).toBe(least);
    expect(jsonSchemaGrammar(many, least - 1)).toBeNull();
  });

  it('keep maxBytes within every budget, for every kind of free value', () => {
    const schemas: (JsonSchema | null)[] = [
      null,
      true,
      tool,
      { type: 'array', items: { type: 'string' } },
      { type: 'object', additionalProperties: { type: 'string' } },
      { type: 'string', pattern: '^[a-z]+( [a-z]+)*$' },
      { type: 'array', items: tool, minItems: 1 },
    ];
    for (const schema of schemas)
      for (let budget = 8; budget < 4_000_000; budget = Math.ceil(budget * 1.7)) {
        const grammar = jsonSchemaGrammar(schema, budget);
        if (grammar) expect(grammar.maxBytes).toBeLessThanOrEqual(budget);
        else expect(minimumJsonBytes(schema)).toBeGreaterThan(budget);
      }
  });
});

describe('grammar size', () => {
  it('counts the copies repetitions make, as llama.cpp builds them', () => {
    expect(grammarSize('root ::= char{0,1000}\n')).toBe(22 + 1000);
    expect(grammarSize('root ::= (char{39}){0,37} char{2}\n')).toBe(34 + 39 + 37 + 2);
  });

  it('gives way to tighter caps when long strings of many lengths would make it too large', () => {
    // 900 strings of 100 to 999 characters: half a million rules when each may run to its maxLength.
    const schema: JsonSchema = {
      anyOf: Array.from({ length: 900 }, (_, i) => ({ type: 'string', maxLength: 100 + i })),
    };
    const grammar = jsonSchemaGrammar(schema, 10_000)!;
    expect(grammarSize(grammar.gbnf)).toBeLessThanOrEqual(MAX_GRAMMAR_CHARS);
    expect(Math.max(...[...grammar.gbnf.matchAll(/^string-(\d+) ::=/gm)].map(([, n]) => Number(n)))).toBe(512);
  });

  it('is refused as too large when even the tightest caps make it so', () => {
    // Strings of exactly 50 to 2,049 characters: two million copies of a character, whatever the caps.
    const schema: JsonSchema = {
      anyOf: Array.from({ length: 2000 }, (_, i) => ({ type: 'string', minLength: 50 + i, maxLength: 50 + i })),
    };
    let refusal: unknown;
    try {
      jsonSchemaGrammar(schema, 4_000_000);
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(UnsupportedSchemaError);
    expect((refusal as UnsupportedSchemaError).problem).toMatchObject({ kind: 'too_large' });
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
