import { SchemaNode, STRING_FORMATS, StringFormat } from './schema-node.js';
import { isObject } from './json-values.js';
import { at, fail } from './schema-problem.js';
import { FORMAT_LENGTHS } from './string-formats.js';

/** Keywords that carry no constraint. */
export const ANNOTATIONS = new Set([
  'title',
  'description',
  '$schema',
  '$id',
  'examples',
  'default',
  '$comment',
  'deprecated',
  'readOnly',
  'writeOnly',
  'strict',
  '$defs',
  'definitions',
]);

const TYPES = ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'] as const;
export type TypeName = (typeof TYPES)[number];

/** Keywords by the type they constrain; used to infer a missing `type`. */
export const TYPE_KEYWORDS: Record<string, TypeName> = {
  minLength: 'string',
  maxLength: 'string',
  format: 'string',
  minimum: 'number',
  properties: 'object',
  required: 'object',
  additionalProperties: 'object',
  items: 'array',
  prefixItems: 'array',
  minItems: 'array',
  maxItems: 'array',
  uniqueItems: 'array',
};

/** Keywords that replace the whole schema; only annotations and `type` (for enum/const) may sit beside them. */
export const COMBINATORS = ['$ref', 'allOf', 'anyOf', 'oneOf', 'const', 'enum'];

export function stringNode(schema: Record<string, unknown>, path: string): SchemaNode {
  const minLength = count(schema, 'minLength', path) ?? 0;
  const maxLength = count(schema, 'maxLength', path);
  if (maxLength !== null && minLength > maxLength)
    fail(at(path, 'maxLength'), 'maxLength', '`maxLength` is below `minLength`');
  const format = schema.format;
  if (format === undefined) return { kind: 'string', minLength, maxLength, format: null };
  if (!STRING_FORMATS.includes(format as StringFormat)) {
    fail(
      at(path, 'format'),
      'format',
      `format "${String(format)}" is not supported (supported: ${STRING_FORMATS.join(', ')})`,
    );
  }
  // Formats have fixed shapes; length limits must not cut into them.
  const [lo, hi] = FORMAT_LENGTHS[format as StringFormat];
  if (minLength > lo || (maxLength !== null && maxLength < hi)) {
    fail(at(path, 'format'), 'format', `length limits cannot be combined with format "${String(format)}"`);
  }
  return { kind: 'string', minLength: 0, maxLength: null, format: format as StringFormat };
}

export function checkNumericKeywords(schema: Record<string, unknown>, path: string): void {
  // Only minimum: 0 is enforceable (by leaving out the minus sign); ranges would need digit-level grammars.
  if (schema.minimum !== undefined && schema.minimum !== 0)
    fail(at(path, 'minimum'), 'minimum', 'only `minimum: 0` is supported');
}

export function inferTypes(keywords: string[]): TypeName[] {
  return [...new Set(keywords.filter((k) => Object.hasOwn(TYPE_KEYWORDS, k)).map((k) => TYPE_KEYWORDS[k]))];
}

export function readTypes(type: unknown, path: string): TypeName[] {
  const list = Array.isArray(type) ? type : [type];
  for (const t of list) if (!TYPES.includes(t as TypeName)) fail(path, 'type', `unknown type ${JSON.stringify(t)}`);
  if (list.length === 0) fail(path, 'type', '`type` must not be empty');
  // integer is a subset of number: keep the wider one when both are listed.
  const types = [...new Set(list as TypeName[])];
  return types.includes('number') ? types.filter((t) => t !== 'integer') : types;
}

export function hasType(value: unknown, type: TypeName): boolean {
  switch (type) {
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return typeof value === type;
  }
}

export function count(schema: Record<string, unknown>, keyword: string, path: string): number | null {
  const value = schema[keyword];
  if (value === undefined) return null;
  if (!Number.isSafeInteger(value) || (value as number) < 0)
    fail(at(path, keyword), keyword, `\`${keyword}\` must be a non-negative integer`);
  return value as number;
}

export function dedupe(nodes: SchemaNode[]): SchemaNode[] {
  const seen = new Set<string>();
  return nodes.filter((n) => {
    // Only literals are compared by value; other nodes are cheap enough to keep.
    if (n.kind !== 'literal') return true;
    if (seen.has(n.json)) return false;
    seen.add(n.json);
    return true;
  });
}

export function isJsonValue(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  return isObject(value) && Object.values(value).every(isJsonValue);
}
