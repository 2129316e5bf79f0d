import { describe, expect, it } from '@jest/globals';
import { findUnsupportedSchemaFeature, JsonSchema, jsonSchemaGrammar, UnsupportedSchemaError } from './index.js';

const problem = (schema: unknown) => findUnsupportedSchemaFeature(schema);

describe('findUnsupportedSchemaFeature', () => {
  it('accepts a realistic tool-parameters schema with annotations', () => {
    const schema: JsonSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'https://example.com/get-weather',
      title: 'get_weather',
      description: 'Get the weather for a city',
      type: 'object',
      strict: true,
      properties: {
        city: { type: 'string', description: 'City name', minLength: 1, maxLength: 80, examples: ['Paris'] },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'], default: 'celsius', $comment: 'display unit' },
        days: { type: ['integer', 'null'], minimum: 0, deprecated: false },
        when: { type: 'string', format: 'date', readOnly: false, writeOnly: false },
        location: { $ref: '#/$defs/point' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 0, maxItems: 5 },
        options: {
          anyOf: [
            { type: 'boolean' },
            { type: 'object', properties: { verbose: { type: 'boolean' } }, additionalProperties: false },
          ],
        },
      },
      required: ['city', 'unit'],
      additionalProperties: false,
      $defs: {
        point: {
          type: 'object',
          properties: { lat: { type: 'number' }, lon: { type: 'number' } },
          required: ['lat', 'lon'],
        },
      },
    };
    expect(problem(schema)).toBeNull();
  });

  it('accepts boolean true, empty schemas and single-element allOf', () => {
    expect(problem(true)).toBeNull();
    expect(problem({})).toBeNull();
    expect(problem({ allOf: [{ type: 'string' }], description: 'x' })).toBeNull();
    expect(problem({ type: 'array', prefixItems: [{ type: 'string' }, { const: 1 }], items: false })).toBeNull();
  });

  it.each([
    [{ type: 'object', properties: { age: { type: 'integer', minimum: 18 } } }, 'properties.age.minimum', 'minimum'],
    [{ type: 'number', maximum: 3 }, 'maximum', 'maximum'],
    [{ type: 'number', multipleOf: 2 }, 'multipleOf', 'multipleOf'],
    [{ type: 'string', pattern: '^a+$' }, 'pattern', 'pattern'],
    [{ properties: { mail: { type: 'string', format: 'email' } } }, 'properties.mail.format', 'format'],
    [{ type: 'integer', format: 'int32' }, 'format', 'format'],
    [false, '', 'false schema'],
    [{ type: 'object', properties: { never: false } }, 'properties.never', 'false schema'],
    [{ allOf: [{ type: 'string' }, { maxLength: 3 }] }, 'allOf', 'allOf'],
    [{ type: 'string', anyOf: [{ maxLength: 3 }] }, 'type', 'type'],
    [{ $ref: 'https://example.com/schema.json' }, '$ref', '$ref'],
    [{ $ref: '#/$defs/missing' }, '$ref', '$ref'],
    [{ type: 'array', uniqueItems: true }, 'uniqueItems', 'uniqueItems'],
    [{ type: 'object', minProperties: 1 }, 'minProperties', 'minProperties'],
    [{ type: 'date' }, 'type', 'type'],
    [{ type: 'string', minLength: 5, maxLength: 2 }, 'maxLength', 'maxLength'],
    [{ type: 'object', required: ['a'], additionalProperties: false }, 'required', 'required'],
    [{ type: 'string', enum: [1, 2] }, 'enum', 'enum'],
    [{ type: 'array', items: [{ type: 'string' }] }, 'items', 'items'],
    [{ type: 'string', constructor: 1 }, 'constructor', 'constructor'],
    [{ type: 'object', properties: { self: { $ref: '#' } } }, 'properties.self.$ref', 'recursive $ref'],
  ])('reports %j at %s', (schema, path, feature) => {
    expect(problem(schema)).toMatchObject({ path, feature });
  });

  it('reports recursive $ref, directly and through another definition', () => {
    const direct = {
      $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } },
      $ref: '#/$defs/node',
    };
    expect(problem(direct)).toMatchObject({ feature: 'recursive $ref', path: '$defs.node.properties.next.$ref' });
    const indirect = {
      definitions: {
        a: { type: 'array', items: { $ref: '#/definitions/b' } },
        b: { anyOf: [{ type: 'null' }, { $ref: '#/definitions/a' }] },
      },
      type: 'object',
      properties: { root: { $ref: '#/definitions/a' } },
    };
    expect(problem(indirect)).toMatchObject({ feature: 'recursive $ref' });
  });

  it('jsonSchemaGrammar throws UnsupportedSchemaError carrying the problem', () => {
    const call = () => jsonSchemaGrammar({ type: 'string', pattern: 'x' }, 1000);
    expect(call).toThrow(UnsupportedSchemaError);
    try {
      call();
    } catch (err) {
      expect((err as UnsupportedSchemaError).problem).toEqual({
        path: 'pattern',
        feature: 'pattern',
        message: expect.any(String),
      });
    }
  });
});
