import { isObject } from './json-values.js';
import { checkJson } from './json-check.js';

/**
 * Keywords the grammar does not always hold: where a schema has one, its results are checked. The grammar
 * holds the rest exactly (type, enum, const, properties, required, items, lengths, counts, the four
 * formats it writes).
 */
export const CHECKED_AFTER = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'pattern',
  'format',
  'not',
  'if',
  'oneOf',
  'allOf',
  'uniqueItems',
  'contains',
  'propertyNames',
  'patternProperties',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'minProperties',
  'maxProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
]);

/**
 * The check a schema's results need: null when the grammar alone holds every keyword it has, else a
 * function that says why a result's text does not conform (null when it does).
 */
export function resultCheck(schema: unknown): ((text: string) => string | null) | null {
  const pending: unknown[] = [schema];
  let needed = false;
  for (let i = 0; i < pending.length && !needed; i++) {
    const s = pending[i];
    if (Array.isArray(s)) pending.push(...s);
    else if (isObject(s)) {
      needed = Object.keys(s).some((k) => CHECKED_AFTER.has(k));
      pending.push(...Object.values(s));
    }
  }
  if (!needed) return null;
  return (text) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return 'the reply is not complete JSON';
    }
    return checkJson(value, schema);
  };
}
