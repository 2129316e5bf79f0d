import { isObject } from './json-values.js';
import { schemaRegExp } from './json-check.js';
import { at, fail } from './schema-problem.js';

/**
 * The most parts (subschemas, enum values, property names) a schema may have. Past it the schema
 * is refused as too large to enforce: its grammar would take too long to build and to sample with.
 */
export const MAX_SCHEMA_PARTS = 10_000;

/** The deepest a schema may nest (keywords and names in a path): deeper, it is refused as too large. */
export const MAX_SCHEMA_DEPTH = 256;

const TYPES = ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'] as const;
export type TypeName = (typeof TYPES)[number];

/** Keywords by the type they constrain; used to narrow a schema without `type` to the types it describes. */
export const TYPE_KEYWORDS: Record<string, TypeName> = {
  minLength: 'string',
  maxLength: 'string',
  pattern: 'string',
  format: 'string',
  minimum: 'number',
  maximum: 'number',
  exclusiveMinimum: 'number',
  exclusiveMaximum: 'number',
  multipleOf: 'number',
  properties: 'object',
  required: 'object',
  additionalProperties: 'object',
  patternProperties: 'object',
  propertyNames: 'object',
  minProperties: 'object',
  maxProperties: 'object',
  dependentRequired: 'object',
  dependentSchemas: 'object',
  items: 'array',
  prefixItems: 'array',
  additionalItems: 'array',
  minItems: 'array',
  maxItems: 'array',
  uniqueItems: 'array',
  contains: 'array',
  minContains: 'array',
  maxContains: 'array',
};

/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = [
  'not',
  'if',
  'then',
  'else',
  'additionalItems',
  'contains',
  'additionalProperties',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
];
/** Keywords whose value is a non-empty array of schemas. */
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'];
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const NUMBERS = ['minimum', 'maximum', 'multipleOf'];
const COUNTS = [
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'minContains',
  'maxContains',
];

function invalid(path: string, keyword: string, message: string): never {
  return fail(at(path, keyword), keyword, message, 'invalid');
}

/**
 * Refuses a schema the JSON Schema specification does not accept (an unknown type, a bound that is
 * not a number, `required` that is not an array of strings, a pattern that does not compile...) or
 * one with more than MAX_SCHEMA_PARTS parts. Unknown keywords are annotations, as the specification
 * says. Stops at the limit, so its work is bounded whatever the schema's size.
 */
export function checkSchemaSyntax(schema: unknown): void {
  let parts = 0;
  const count = (n: number, path: string) => {
    parts += n;
    if (parts > MAX_SCHEMA_PARTS)
      fail(
        path,
        'schema size',
        `the schema has more than ${MAX_SCHEMA_PARTS} parts (subschemas, enum values, properties); it is too large to enforce`,
        'too_large',
      );
  };
  const walk = (s: unknown, path: string, depth = path.split('.').length): void => {
    count(1, path);
    if (depth > MAX_SCHEMA_DEPTH)
      fail(path, 'schema size', `the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`, 'too_large');
    if (typeof s === 'boolean') return;
    if (!isObject(s)) fail(path, 'schema', 'a schema must be an object or a boolean', 'invalid');
    if (s.type !== undefined) readTypes(s.type, at(path, 'type'));
    for (const k of NUMBERS)
      if (s[k] !== undefined && (typeof s[k] !== 'number' || !Number.isFinite(s[k])))
        invalid(path, k, `\`${k}\` must be a number`);
    if (typeof s.multipleOf === 'number' && s.multipleOf <= 0)
      invalid(path, 'multipleOf', '`multipleOf` must be greater than 0');
    for (const k of ['exclusiveMinimum', 'exclusiveMaximum'])
      if (s[k] !== undefined && typeof s[k] !== 'boolean' && (typeof s[k] !== 'number' || !Number.isFinite(s[k])))
        invalid(path, k, `\`${k}\` must be a number`);
    for (const k of COUNTS) if (s[k] !== undefined) countValue(s, k, path);
    for (const k of ['uniqueItems'])
      if (s[k] !== undefined && typeof s[k] !== 'boolean') invalid(path, k, `\`${k}\` must be a boolean`);
    if (s.required !== undefined && !isStringArray(s.required))
      invalid(path, 'required', '`required` must be an array of strings');
    if (s.enum !== undefined) {
      if (!Array.isArray(s.enum)) invalid(path, 'enum', '`enum` must be an array');
      count(s.enum.length, at(path, 'enum'));
    }
    for (const k of ['pattern', 'format', '$ref'])
      if (s[k] !== undefined && typeof s[k] !== 'string') invalid(path, k, `\`${k}\` must be a string`);
    if (typeof s.pattern === 'string' && !schemaRegExp(s.pattern))
      invalid(path, 'pattern', `\`pattern\` ${JSON.stringify(s.pattern)} is not a regular expression`);
    for (const k of SCHEMA_KEYWORDS) if (s[k] !== undefined) walk(s[k], at(path, k));
    for (const k of SCHEMA_LISTS) {
      if (s[k] === undefined) continue;
      if (!Array.isArray(s[k]) || s[k].length === 0) invalid(path, k, `\`${k}\` must be a non-empty array of schemas`);
      s[k].forEach((sub: unknown, i: number) => walk(sub, at(at(path, k), String(i))));
    }
    for (const k of SCHEMA_MAPS) {
      if (s[k] === undefined) continue;
      const map = s[k];
      if (!isObject(map)) invalid(path, k, `\`${k}\` must be an object`);
      for (const [name, sub] of Object.entries(map)) {
        if (k === 'patternProperties' && !schemaRegExp(name))
          invalid(path, k, `${JSON.stringify(name)} is not a regular expression`);
        walk(sub, at(at(path, k), name));
      }
    }
    if (s.items !== undefined) {
      if (Array.isArray(s.items)) s.items.forEach((sub, i) => walk(sub, at(at(path, 'items'), String(i))));
      else walk(s.items, at(path, 'items'));
    }
    if (s.prefixItems !== undefined) {
      if (!Array.isArray(s.prefixItems)) invalid(path, 'prefixItems', '`prefixItems` must be an array of schemas');
      s.prefixItems.forEach((sub, i) => walk(sub, at(at(path, 'prefixItems'), String(i))));
    }
    for (const k of ['dependentRequired', 'dependencies']) {
      if (s[k] === undefined) continue;
      const map = s[k];
      if (!isObject(map)) invalid(path, k, `\`${k}\` must be an object`);
      for (const [name, value] of Object.entries(map)) {
        if (isStringArray(value)) continue;
        if (k === 'dependentRequired') invalid(path, k, `\`${k}.${name}\` must be an array of strings`);
        walk(value, at(at(path, k), name));
      }
    }
  };
  walk(schema, '');
}

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function countValue(schema: Record<string, unknown>, keyword: string, path: string): number {
  const value = schema[keyword];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    invalid(path, keyword, `\`${keyword}\` must be a non-negative integer`);
  return value as number;
}

/** A count keyword's value (minItems, maxLength...), null when absent. The syntax check has vouched for it. */
export function count(schema: Record<string, unknown>, keyword: string): number | null {
  const value = schema[keyword];
  return typeof value === 'number' ? value : null;
}

export function inferTypes(keywords: string[]): TypeName[] {
  return [...new Set(keywords.filter((k) => Object.hasOwn(TYPE_KEYWORDS, k)).map((k) => TYPE_KEYWORDS[k]))];
}

/** The types `type` names, integer folded into number when both are named. */
export function readTypes(type: unknown, path: string): TypeName[] {
  const list = Array.isArray(type) ? type : [type];
  for (const t of list)
    if (!TYPES.includes(t as TypeName)) fail(path, 'type', `unknown type ${JSON.stringify(t)}`, 'invalid');
  const types = [...new Set(list as TypeName[])];
  return types.includes('number') ? types.filter((t) => t !== 'integer') : types;
}

/** Types both lists allow; an integer is a number. */
export function intersectTypes(a: TypeName[], b: TypeName[]): TypeName[] {
  const out = new Set<TypeName>();
  for (const t of a) {
    if (b.includes(t)) out.add(t);
    else if (t === 'integer' && b.includes('number')) out.add('integer');
    else if (t === 'number' && b.includes('integer')) out.add('integer');
  }
  return [...out];
}

/** Whether a keyword constrains values (annotations and definitions do not). */
export function constrains(keyword: string): boolean {
  return !ANNOTATIONS.has(keyword);
}

const ANNOTATIONS = new Set([
  'title',
  'description',
  '$schema',
  '$id',
  '$anchor',
  '$dynamicAnchor',
  'examples',
  'default',
  '$comment',
  'deprecated',
  'readOnly',
  'writeOnly',
  'strict',
  '$defs',
  'definitions',
  'nullable',
  'discriminator',
]);

export const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1) || 'ref';
