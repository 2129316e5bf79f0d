import { describe, expect, it } from '@jest/globals';
import {
  checkJson,
  findUnsupportedSchemaFeature,
  JsonSchema,
  jsonSchemaGrammar,
  schemaBudgetProblem,
} from './index.js';

const problem = (schema: unknown) => findUnsupportedSchemaFeature(schema);

describe('bounded work, whatever the schema asks for', () => {
  // Each takes milliseconds; work that grew with what the schema asks for (1e15 items, 2^40 backtracks)
  // would take hours. The bound tells the two apart on however busy a machine; speed is bench/'s to measure.
  const RUNAWAY_MS = 15_000;
  const quickly = (fn: () => unknown) => {
    const started = performance.now();
    fn();
    return performance.now() - started;
  };

  it('refuses minItems of 1e15 against a small budget without building anything', () => {
    const schema = { type: 'array', items: { type: 'integer' }, minItems: 1e15 };
    expect(quickly(() => expect(jsonSchemaGrammar(schema, 50)).toBeNull())).toBeLessThan(RUNAWAY_MS);
    expect(quickly(() => expect(schemaBudgetProblem(schema, 50)).toBeGreaterThan(1e15))).toBeLessThan(RUNAWAY_MS);
    // Even with no budget at all: past MAX_GRAMMAR_BYTES nothing is written.
    expect(quickly(() => expect(schemaBudgetProblem(schema, Infinity)).toBeGreaterThan(1e15))).toBeLessThan(RUNAWAY_MS);
  });

  it('refuses minLength and nested minItems that multiply past the budget', () => {
    const nested = {
      type: 'array',
      minItems: 1e6,
      items: { type: 'array', minItems: 1e6, items: { type: 'string', minLength: 1e6 } },
    };
    expect(quickly(() => expect(jsonSchemaGrammar(nested, 100_000)).toBeNull())).toBeLessThan(RUNAWAY_MS);
  });

  it('compiles a large minItems that fits the budget to chunked repeats', () => {
    const grammar = jsonSchemaGrammar(
      { type: 'array', items: { type: 'integer', minimum: 0, maximum: 9 }, minItems: 5000 },
      20_000,
    );
    expect(grammar).not.toBeNull();
    expect(grammar!.gbnf.length).toBeLessThan(2000);
  });

  it('refuses a 100,000-value enum as too large, fast', () => {
    const values = Array.from({ length: 100_000 }, (_, i) => `value-${i}`);
    expect(
      quickly(() => expect(problem({ enum: values })).toMatchObject({ kind: 'too_large', feature: 'schema size' })),
    ).toBeLessThan(RUNAWAY_MS);
  });

  it('writes a 5,000-value enum as a trie, fast', () => {
    const values = Array.from({ length: 5000 }, (_, i) => `value-${i}`);
    let gbnf = '';
    expect(quickly(() => (gbnf = jsonSchemaGrammar({ enum: values }, 1000)!.gbnf))).toBeLessThan(RUNAWAY_MS);
    // Shared prefixes once: smaller than the values written out one by one.
    expect(gbnf.length).toBeLessThan(JSON.stringify(values).length);
    expect(gbnf.match(/value-/g)).toHaveLength(1);
  });

  it('refuses a 20,000-property object as too large, fast', () => {
    const properties = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: 'integer' }]));
    expect(
      quickly(() => expect(problem({ type: 'object', properties })).toMatchObject({ kind: 'too_large' })),
    ).toBeLessThan(RUNAWAY_MS);
  });

  it('refuses a schema nested thousands deep, fast', () => {
    let deep: JsonSchema = { type: 'string' };
    for (let i = 0; i < 5000; i++) deep = { type: 'array', items: deep };
    expect(quickly(() => expect(problem(deep)).toMatchObject({ kind: 'too_large' }))).toBeLessThan(RUNAWAY_MS);
  });

  it('matches a backtracking pattern in bounded time, in the schema check and on results', () => {
    const evil = { type: 'string', pattern: '^(a+)+$', enum: [`${'a'.repeat(40)}!`, 'aaa'] };
    expect(quickly(() => expect(problem(evil)).toBeNull())).toBeLessThan(RUNAWAY_MS);
    expect(quickly(() => expect(checkJson(`${'a'.repeat(40)}!`, evil)).toEqual(expect.any(String)))).toBeLessThan(
      RUNAWAY_MS,
    );
  });

  it('bounds a schema whose anyOf branches multiply', () => {
    const wide = {
      anyOf: Array.from({ length: 50 }, (_, i) => ({ type: 'object', properties: { [`k${i}`]: { type: 'string' } } })),
    };
    const deep = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`p${i}`, wide])),
    };
    expect(quickly(() => expect(problem(deep)).toMatchObject({ kind: 'too_large' }))).toBeLessThan(RUNAWAY_MS);
  });
});
