import { describe, expect, it } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { useGrammarSampler } from '../../../test/support/grammar-sampler.js';
import { JsonSchema, jsonSchemaGrammar } from './index.js';

/**
 * Runs a random-weight model at temperature 1 under the generated grammars in
 * real llama.cpp: whatever it samples must be complete JSON that validates
 * against the schema and fits the byte (and so token) budget.
 */
const SEEDS = [1, 2, 3, 4];

const point = {
  type: 'object',
  properties: { x: { type: 'number' }, y: { type: 'integer' } },
  required: ['x', 'y'],
  additionalProperties: false,
};

/** `favor`: characters whose tokens get a strong bias, to reach rare branches such as escapes. */
const CASES: { name: string; schema: JsonSchema | null; maxBytes: number; favor?: string }[] = [
  { name: 'json_object (null schema)', schema: null, maxBytes: 300 },
  {
    name: 'nested object with arrays',
    schema: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 12 },
        tags: { type: 'array', items: { type: 'string', maxLength: 6 }, minItems: 1, maxItems: 3 },
        scores: { type: 'array', items: { type: 'number' } },
        address: {
          type: 'object',
          properties: { city: { type: 'string' }, zip: { type: 'string', minLength: 5, maxLength: 5 } },
          required: ['zip'],
        },
        count: { type: 'integer', minimum: 0 },
      },
      required: ['name', 'tags', 'address'],
    },
    maxBytes: 400,
  },
  {
    name: 'enums and consts',
    schema: {
      type: 'object',
      properties: {
        color: { enum: ['red', 'green', null, 3, { a: [1, 'é'] }, 'naïve "quoted"'] },
        unit: { type: 'string', enum: ['c', 'f', 7] },
        ok: { const: true },
        日本: { type: 'boolean' },
      },
      required: ['color', 'unit', 'ok', '日本'],
      additionalProperties: false,
    },
    maxBytes: 200,
  },
  {
    name: 'anyOf / oneOf',
    schema: {
      type: 'object',
      properties: {
        a: {
          anyOf: [
            { type: 'string', maxLength: 5 },
            { type: 'integer' },
            { type: 'object', properties: { x: { type: 'boolean' } }, required: ['x'] },
          ],
        },
        b: { oneOf: [{ type: 'null' }, { type: 'array', items: { type: 'boolean' }, maxItems: 2 }] },
        c: { type: ['string', 'null'], maxLength: 3 },
      },
      required: ['a', 'b', 'c'],
    },
    maxBytes: 200,
  },
  {
    name: '$defs / $ref',
    schema: {
      $defs: { point },
      definitions: { label: { type: 'string', maxLength: 8 } },
      type: 'object',
      properties: {
        from: { $ref: '#/$defs/point' },
        to: { $ref: '#/$defs/point' },
        label: { $ref: '#/definitions/label' },
      },
      required: ['from', 'to'],
    },
    maxBytes: 250,
  },
  {
    name: 'formats',
    schema: {
      type: 'object',
      properties: {
        day: { type: 'string', format: 'date' },
        at: { type: 'string', format: 'time' },
        stamp: { type: 'string', format: 'date-time' },
        id: { type: 'string', format: 'uuid' },
      },
      required: ['day', 'at', 'stamp', 'id'],
    },
    maxBytes: 200,
  },
  {
    name: 'prefixItems tuple',
    schema: {
      type: 'array',
      prefixItems: [{ type: 'string', maxLength: 4 }, { type: 'integer' }, { type: 'boolean' }],
      items: { type: 'null' },
      minItems: 2,
      maxItems: 5,
    },
    maxBytes: 100,
  },
  {
    name: 'zod 4 integer bounds (.int(), .int().min().max())',
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        n: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
        age: { type: 'integer', minimum: 0, maximum: 150 },
        offset: { type: 'integer', minimum: -40, maximum: 1000 },
        big: { type: 'integer', exclusiveMinimum: 99, exclusiveMaximum: 123457 },
        neg: { type: 'integer', maximum: -1 },
        positive: { type: 'number', minimum: 0 },
        ratio: { type: 'number', minimum: 0, maximum: 1 },
        price: { type: 'number', exclusiveMinimum: 0, maximum: 100 },
      },
      required: ['n', 'age', 'offset', 'big', 'neg', 'positive', 'ratio', 'price'],
      additionalProperties: false,
    },
    maxBytes: 300,
  },
  {
    name: 'allOf beside type, $ref beside description, a large enum as a trie',
    schema: {
      $defs: { code: { type: 'string', enum: Array.from({ length: 500 }, (_, i) => `c${i * 7}`) } },
      type: 'object',
      allOf: [
        { properties: { a: { type: 'boolean' }, code: { $ref: '#/$defs/code', description: 'a code' } } },
        { required: ['a', 'code'] },
      ],
      minProperties: 2,
    },
    maxBytes: 120,
  },
  {
    name: 'recursive tree, unrolled',
    schema: {
      $defs: {
        node: {
          type: 'object',
          properties: {
            v: { type: 'integer', minimum: 0, maximum: 9 },
            kids: { type: 'array', items: { $ref: '#/$defs/node' }, maxItems: 2 },
          },
          required: ['v'],
          additionalProperties: false,
        },
      },
      $ref: '#/$defs/node',
    },
    maxBytes: 400,
  },
  {
    name: 'map with minProperties and maxProperties',
    schema: {
      type: 'object',
      additionalProperties: { type: 'integer', minimum: 0, maximum: 3 },
      minProperties: 1,
      maxProperties: 3,
    },
    maxBytes: 200,
  },
  {
    name: 'patterns written by the grammar',
    schema: {
      type: 'object',
      properties: {
        code: { type: 'string', pattern: '^[A-Z]{3}$' },
        month: { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$' },
        slug: { type: 'string', pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$' },
        anything: { type: 'string', pattern: '^(yes|no|maybe)?!*$' },
        notQuote: { type: 'string', pattern: '^[^a-z]{2,5}$' },
        dotted: { type: 'string', pattern: '^v\\d+\\.\\d+(\\.\\d+)?$' },
      },
      required: ['code', 'month', 'slug', 'anything', 'notQuote', 'dotted'],
      additionalProperties: false,
    },
    maxBytes: 400,
    favor: '"\\-',
  },
  { name: 'any value (true schema)', schema: true, maxBytes: 120 },
  { name: 'array of long strings', schema: { type: 'array', items: { type: 'string' }, minItems: 1 }, maxBytes: 1000 },
  // Escapes: backslash, `u` and hex digits favoured, and the bytes of é and 日, which the grammar must refuse.
  {
    name: 'escapes',
    schema: { type: 'array', items: { type: 'string', maxLength: 20 } },
    maxBytes: 400,
    favor: '\\ud0f9\u00e9\u65e5',
  },
  {
    name: 'tight budget of 40 bytes',
    schema: {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'array', items: { type: 'integer' } } },
      required: ['a', 'b'],
    },
    maxBytes: 40,
  },
];

describe('generated grammars in llama.cpp with a random model', () => {
  const { generate, createGrammar } = useGrammarSampler(2048);
  const ajv = new Ajv2020({ strict: false });
  addFormatsModule.default(ajv);

  it('llama.cpp accepts grammars with repetitions past its 2000-rule limit per repeat', async () => {
    for (const schema of [
      { type: 'array', items: { type: 'string', minLength: 2100 }, minItems: 2 },
      { type: 'array', items: { type: 'boolean' }, minItems: 2100 },
      // The longest free string, in blocks.
      { type: 'object', additionalProperties: { type: 'string' } },
    ]) {
      const grammar = jsonSchemaGrammar(schema, 1e9)!;
      await expect(createGrammar(grammar.gbnf)).resolves.toBeDefined();
    }
  });

  it('a free string runs past 256 characters when the budget allows, as gibberish', async () => {
    // 4,000 bytes leave a tool's one free argument 512 characters (3,074 bytes), not 1,024.
    const schema = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] };
    const grammar = jsonSchemaGrammar(schema, 4000)!;
    expect(grammar.maxBytes).toBeLessThanOrEqual(4000);
    const validate = ajv.compile(schema);
    for (const seed of SEEDS.slice(0, 2)) {
      // A quote or a backslash only where the grammar allows nothing else: no early end, no escapes.
      const { text, tokens } = await generate(grammar.gbnf, seed, { avoid: '"\\' });
      const value = JSON.parse(text) as { command: string };
      if (!validate(value)) throw new Error(`${text} does not match the schema: ${ajv.errorsText(validate.errors)}`);
      expect(value.command.length).toBeGreaterThan(256);
      expect(value.command.length).toBeLessThanOrEqual(512);
      expect(tokens).toBeLessThanOrEqual(grammar.maxBytes);
    }
  });

  it('a cap past 1,000 characters, written in blocks, ends the string exactly there', async () => {
    const grammar = jsonSchemaGrammar({ type: 'string', maxLength: 1500 }, 10_000)!;
    expect(grammar.gbnf).toContain('(char{39}){0,37} char{0,38} | (char{39}){38} char{0,18}');
    const { text } = await generate(grammar.gbnf, 1, { favor: 'a' });
    expect(text).toBe(`"${'a'.repeat(1500)}"`);
  });

  it.each(CASES)('$name: output is complete, valid and within budget', async ({ schema, maxBytes, favor }) => {
    const grammar = jsonSchemaGrammar(schema, maxBytes);
    expect(grammar).not.toBeNull();
    expect(grammar!.maxBytes).toBeLessThanOrEqual(maxBytes);
    const validate = ajv.compile(schema ?? { type: 'object' });
    for (const seed of SEEDS) {
      const { text, tokens } = await generate(grammar!.gbnf, seed, { favor });
      let value: unknown;
      expect(() => (value = JSON.parse(text))).not.toThrow();
      if (!validate(value)) throw new Error(`${text} does not match the schema: ${ajv.errorsText(validate.errors)}`);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(grammar!.maxBytes);
      expect(tokens).toBeLessThanOrEqual(grammar!.maxBytes);
    }
  });
});
