import { describe, expect, it } from '@jest/globals';
import { checkJson, JsonSchema } from './index.js';
import { zodSchema } from '../../../test/support/client-schemas.js';

describe('checkJson: the check on results', () => {
  it.each<[JsonSchema, unknown, unknown]>([
    [
      zodSchema,
      { count: 3, rating: 5, price: 1.5, email: 'a@b.co' },
      { count: 3, rating: 6, price: 1.5, email: 'a@b.co' },
    ],
    [
      zodSchema,
      { count: -9007199254740991, rating: 1, price: 0.1, email: 'x@y.org' },
      { count: 1, rating: 1, price: 0, email: 'x@y.org' },
    ],
    [{ type: 'string', pattern: '^[A-Z]{3}$' }, 'ABC', 'AB'],
    [{ type: 'string', format: 'email' }, 'a@b.co', 'nope'],
    [{ type: 'string', format: 'date' }, '2024-02-29', '2023-02-29'],
    [{ type: 'number', multipleOf: 0.1 }, 0.3, 0.35],
    [{ oneOf: [{ type: 'integer' }, { type: 'number', minimum: 2 }] }, 1, 3],
    [{ not: { const: 'x' } }, 'y', 'x'],
    [{ if: { required: ['a'] }, then: { required: ['b'] } }, { a: 1, b: 2 }, { a: 1 }],
    [{ dependentRequired: { a: ['b'] } }, { b: 1 }, { a: 1 }],
    [{ contains: { const: 1 }, maxContains: 1 }, [1, 2], [1, 1]],
    [{ uniqueItems: true }, [1, { a: 1 }], [{ a: 1 }, { a: 1 }]],
    [{ minProperties: 1 }, { a: 1 }, {}],
    [{ propertyNames: { pattern: '^[a-z]+$' } }, { ab: 1 }, { A: 1 }],
    [{ patternProperties: { '^x-': { type: 'integer' } }, additionalProperties: false }, { 'x-a': 1 }, { y: 1 }],
    [{ type: 'array', items: [{ type: 'string' }], additionalItems: false }, ['a'], ['a', 1]],
    [{ type: 'number', minimum: 0, exclusiveMinimum: true }, 1, 0],
    [{ type: 'string', minLength: 2 }, '日本', '日'],
    [{ $defs: { a: { type: 'integer' } }, items: { $ref: '#/$defs/a' } }, [1], [1.5]],
  ])('%j: accepts %j, refuses %j', (schema, good, bad) => {
    expect(checkJson(good, schema)).toBeNull();
    expect(checkJson(bad, schema)).toEqual(expect.any(String));
  });
});
