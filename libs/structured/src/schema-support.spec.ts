import { describe, expect, it } from '@jest/globals';
import { findUnsupportedSchemaFeature, JsonSchema, jsonSchemaGrammar, UnsupportedSchemaError } from './index.js';
import { zodSchema } from '../../../test/support/client-schemas.js';

const problem = (schema: unknown) => findUnsupportedSchemaFeature(schema);

/** Pydantic v2: `$defs`, `allOf` around a `$ref` with a description beside it, `anyOf` with null, `default`, `title`. */
const pydanticSchema: JsonSchema = {
  $defs: {
    Color: { enum: ['red', 'green'], title: 'Color', type: 'string' },
    Point: {
      properties: { x: { title: 'X', type: 'number' }, y: { title: 'Y', type: 'number' } },
      required: ['x', 'y'],
      title: 'Point',
      type: 'object',
    },
  },
  properties: {
    color: { allOf: [{ $ref: '#/$defs/Color' }], description: 'the color' },
    at: { $ref: '#/$defs/Point', description: 'where' },
    note: { anyOf: [{ type: 'string', maxLength: 10 }, { type: 'null' }], default: null, title: 'Note' },
    size: { exclusiveMaximum: 100, minimum: 0, title: 'Size', type: 'integer' },
  },
  required: ['color', 'at'],
  title: 'Shape',
  type: 'object',
};

/** TypeBox / zod-to-json-schema (draft 7): `definitions`, boolean-free exclusive bounds, `const`, array-form items. */
const draft7Schema: JsonSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  definitions: { Id: { type: 'string', minLength: 1 } },
  type: 'object',
  properties: {
    id: { $ref: '#/definitions/Id' },
    kind: { type: 'string', const: 'box' },
    pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false, minItems: 2 },
    old: { type: 'number', minimum: 0, exclusiveMinimum: true },
  },
  required: ['id', 'kind', 'pair'],
  additionalProperties: false,
};

describe('findUnsupportedSchemaFeature: schemas as clients write them', () => {
  it.each([
    ['zod 4', zodSchema],
    ['Pydantic', pydanticSchema],
    ['draft 7 / TypeBox', draft7Schema],
  ])('accepts %s output and builds a grammar for it', (_, schema) => {
    expect(problem(schema)).toBeNull();
    expect(jsonSchemaGrammar(schema, 2000)).not.toBeNull();
  });

  it.each<[string, JsonSchema]>([
    ['numeric bounds', { type: 'number', minimum: -3.5, maximum: 3, exclusiveMinimum: -4, exclusiveMaximum: 10 }],
    ['multipleOf', { type: 'integer', multipleOf: 5 }],
    ['pattern', { type: 'string', pattern: '^[A-Z]{3}$' }],
    ['any format', { type: 'string', format: 'email' }],
    ['format on a number', { type: 'integer', format: 'int32' }],
    ['type beside allOf', { type: 'object', allOf: [{ properties: { a: { type: 'string' } } }, { required: ['a'] }] }],
    ['type beside anyOf', { type: 'string', anyOf: [{ maxLength: 3 }, { format: 'date' }] }],
    ['oneOf', { oneOf: [{ type: 'integer' }, { type: 'string' }] }],
    ['not', { type: 'string', not: { const: 'x' } }],
    ['if/then/else', { type: 'object', if: { required: ['a'] }, then: { required: ['b'] }, else: {} }],
    ['dependentRequired', { type: 'object', properties: { a: {}, b: {} }, dependentRequired: { a: ['b'] } }],
    ['contains', { type: 'array', contains: { const: 1 }, minContains: 1, maxContains: 2 }],
    ['uniqueItems', { type: 'array', items: { type: 'integer' }, uniqueItems: true }],
    ['minProperties/maxProperties', { type: 'object', minProperties: 1, maxProperties: 3 }],
    ['propertyNames', { type: 'object', propertyNames: { pattern: '^[a-z]+$' } }],
    ['patternProperties', { type: 'object', patternProperties: { '^x-': { type: 'integer' } } }],
    ['additionalProperties schema', { type: 'object', additionalProperties: { type: 'boolean' } }],
    [
      'recursive $ref',
      { $defs: { n: { type: 'object', properties: { next: { $ref: '#/$defs/n' } } } }, $ref: '#/$defs/n' },
    ],
    ['$ref to the root', { type: 'object', properties: { self: { $ref: '#' } } }],
    ['$ref by JSON pointer', { type: 'object', properties: { a: { type: 'string' }, b: { $ref: '#/properties/a' } } }],
    ['unknown keywords', { type: 'string', 'x-order': 1, nullable: true, discriminator: {} }],
    ['unevaluatedProperties', { type: 'object', unevaluatedProperties: false }],
    ['false property (never written)', { type: 'object', properties: { never: false } }],
    ['default, examples, deprecated', { type: 'integer', default: 3, examples: [1], deprecated: true }],
  ])('accepts %s', (_, schema) => {
    expect(problem(schema)).toBeNull();
    expect(jsonSchemaGrammar(schema, 500)).not.toBeNull();
  });

  it.each([
    [{ type: 'foo' }, 'type', 'invalid'],
    [{ type: 'integer', minimum: 'x' }, 'minimum', 'invalid'],
    [{ type: 'object', required: 'a' }, 'required', 'invalid'],
    [{ type: 'object', required: [1] }, 'required', 'invalid'],
    [{ type: 'array', minItems: -1 }, 'minItems', 'invalid'],
    [{ type: 'string', maxLength: 1.5 }, 'maxLength', 'invalid'],
    [{ type: 'string', pattern: '(' }, 'pattern', 'invalid'],
    [{ type: 'number', multipleOf: 0 }, 'multipleOf', 'invalid'],
    [{ anyOf: [] }, 'anyOf', 'invalid'],
    [{ enum: 'a' }, 'enum', 'invalid'],
    [{ properties: { a: 3 } }, 'properties.a', 'invalid'],
    [{ $ref: 'https://example.com/schema.json' }, '$ref', 'unsupported'],
    [{ $ref: '#/$defs/missing' }, '$ref', 'unsupported'],
    [false, '', 'unsatisfiable'],
    [{ type: 'string', enum: [1, 2] }, '', 'unsatisfiable'],
    [{ type: 'integer', minimum: 5, maximum: 4 }, '', 'unsatisfiable'],
    [{ type: 'object', required: ['a'], additionalProperties: false }, '', 'unsatisfiable'],
    [{ allOf: [{ type: 'string' }, { type: 'integer' }] }, '', 'unsatisfiable'],
  ])('refuses %j at %s (%s)', (schema, path, kind) => {
    expect(problem(schema)).toMatchObject({ path, kind });
  });

  it('jsonSchemaGrammar throws UnsupportedSchemaError carrying the problem', () => {
    const call = () => jsonSchemaGrammar({ type: 'string', pattern: '[' }, 1000);
    expect(call).toThrow(UnsupportedSchemaError);
    try {
      call();
    } catch (err) {
      expect((err as UnsupportedSchemaError).problem).toEqual({
        path: 'pattern',
        feature: 'pattern',
        message: expect.any(String),
        kind: 'invalid',
      });
    }
  });
});

describe('the grammar holds what it can', () => {
  const gbnf = (schema: JsonSchema, budget = 500) => jsonSchemaGrammar(schema, budget)!.gbnf;

  it('writes a narrow integer range as its values, filtered by multipleOf', () => {
    const g = gbnf({ type: 'integer', minimum: 1, maximum: 20, multipleOf: 5 });
    expect(g).toContain('"5"');
    expect(g).toContain('"20"');
    expect(g).not.toContain('"3"');
    expect(g).not.toContain('[0-9]');
  });

  /** The one-rule grammar of an integer range as a regular expression: literals, classes, counts, groups. */
  const rangeRegExp = (schema: JsonSchema) => {
    const lines = gbnf(schema).trim().split('\n');
    const body = lines.find((l) => l.startsWith('integer-'))!.split(' ::= ')[1]!;
    const source = body
      .replace(/"(-|\d+)"/g, (_, t: string) => (t === '-' ? '\\-' : t))
      .replace(/ /g, '')
      .replace(/\(/g, '(?:');
    return new RegExp(`^(?:${source})$`);
  };

  it.each([
    [0, 150],
    [1, 1000],
    [-40, 60],
    [-1000, -7],
    [5, 5099],
    [100, 999],
    [0, 99],
    [-123456, 98765],
  ])('holds the integers from %i to %i exactly', (lo, hi) => {
    const re = rangeRegExp({ type: 'integer', minimum: lo, maximum: hi });
    const span = hi - lo;
    const step = Math.max(1, Math.floor(span / 3000));
    for (let v = lo - Math.min(span, 2000); v <= hi + Math.min(span, 2000); v += step)
      expect([v, re.test(String(v))]).toEqual([v, v >= lo && v <= hi]);
    for (const v of [lo, hi]) expect(re.test(String(v))).toBe(true);
    expect(re.test('007')).toBe(false);
    expect(re.test('-0')).toBe(false);
  });

  it('holds the sign and the digits of bounds too wide to write out', () => {
    expect(gbnf({ type: 'integer', minimum: 1 })).toMatch(/positive-integer ::= \(\[1-9\] \[0-9\]\{0,14\}\)/);
    expect(gbnf({ type: 'number', minimum: -5, maximum: 999.5 })).toMatch(
      /number ::= "-"\? \("0" \| \[1-9\] \[0-9\]\{0,2\}\)/,
    );
    // A non-negative bounded number: whole numbers inside the bounds, any fraction below the top.
    expect(gbnf({ type: 'number', minimum: 0, maximum: 1 })).toContain(
      'number-0-to-1 ::= ("0") ("." [0-9]{1,15})? | "1"',
    );
    expect(gbnf({ type: 'number', exclusiveMinimum: 0, maximum: 100 })).toContain('number-1-to-100 ::=');
    expect(gbnf({ type: 'integer', maximum: -1 })).toMatch(/negative-integer ::= "-" \(\[1-9\]/);
    // zod's .int(): 16 digits allowed, the caps' 15 stand.
    expect(gbnf(zodSchema, 2000)).toMatch(/integer ::= "-"\? \("0" \| \[1-9\] \[0-9\]\{0,14\}\)/);
  });

  it.each([
    ['^[A-Z]{3}$', 'pattern ::= "\\"" [A-Z]{3} "\\""'],
    // The free-string cap a budget of 300 allows (2 + 256 bytes).
    ['^\\d+$', 'pattern ::= "\\"" [0-9]{1,256} "\\""'],
    // A repeated group is a rule of its own, repeated as one symbol.
    ['^(a|b)?$', 'pattern-part ::= (["a"] | ["b"])\npattern ::= "\\"" pattern-part{0,1} "\\""'],
  ])('writes the pattern %s in the grammar', (pattern, rule) => {
    const g = gbnf({ type: 'string', pattern }, 300);
    expect(g.replace(/\[(.)\]/g, '["$1"]')).toContain(rule.replace(/\[(.)\]/g, '["$1"]'));
  });

  it.each(['[A-Z]{3}', '^(?=a).$', '^\\bx$', '^(a)\\1$', '^é$', '^a"b$'])(
    'leaves the pattern %s to the result check',
    (pattern) => {
      const g = gbnf({ type: 'string', pattern });
      expect(g).not.toContain('pattern ::=');
    },
  );

  it('merges allOf into the schema beside it', () => {
    const g = gbnf({
      type: 'object',
      allOf: [{ properties: { a: { type: 'boolean' } } }, { required: ['a'] }],
    });
    // `a` is required: its member has no alternative.
    expect(g).toMatch(/value-from-0 ::= "\\"a\\":" value-a\n/);
  });

  it('keeps only the enum values the rest of the schema accepts', () => {
    const g = gbnf({ type: 'string', enum: ['ab', 'abcd', 'x'], maxLength: 2 });
    expect(g).toContain('ab');
    expect(g).not.toContain('abcd');
  });

  it('unrolls a recursive schema a few levels and leaves the recursion out there', () => {
    const tree = {
      $defs: {
        node: {
          type: 'object',
          properties: { v: { type: 'integer' }, kids: { type: 'array', items: { $ref: '#/$defs/node' } } },
          required: ['v'],
        },
      },
      $ref: '#/$defs/node',
    };
    expect(jsonSchemaGrammar(tree, 5000)).not.toBeNull();
    const required = { ...tree, $defs: { node: { ...tree.$defs.node, required: ['v', 'kids'] } } };
    // Every node needs kids, each needing kids: an array of them may be empty, so it still ends.
    expect(jsonSchemaGrammar(required, 5000)).not.toBeNull();
    const endless = {
      $defs: { n: { type: 'object', properties: { n: { $ref: '#/$defs/n' } }, required: ['n'] } },
      $ref: '#/$defs/n',
    };
    expect(problem(endless)).toMatchObject({ kind: 'unsatisfiable' });
  });

  it('makes optional properties required to meet minProperties, and leaves out those past maxProperties', () => {
    const props = { a: { type: 'null' }, b: { type: 'null' }, c: { type: 'null' } };
    // All three required: no alternatives, nothing optional.
    expect(jsonSchemaGrammar({ type: 'object', properties: props, minProperties: 3 }, 100)!.gbnf).not.toMatch(/[|?]/);
    expect(gbnf({ type: 'object', properties: props, maxProperties: 1 })).not.toContain('\\"b\\"');
  });
});
