import { asciiJson, PropertyNode, SchemaNode } from './schema-node.js';
import { isObject } from './json-values.js';
import { checkJson, matches, schemaRegExp } from './json-check.js';
import { numberNode, stringNode, union } from './scalar-nodes.js';
import {
  checkSchemaSyntax,
  constrains,
  count,
  inferTypes,
  MAX_SCHEMA_PARTS,
  readTypes,
  refName,
  TypeName,
} from './schema-keywords.js';
import { merge } from './schema-merge.js';
import { resolvePointer } from './schema-pointer.js';
import { at, fail, SchemaProblem, UnsupportedSchemaError } from './schema-problem.js';

export { UnsupportedSchemaError } from './schema-problem.js';
export type { SchemaProblem, SchemaProblemKind } from './schema-problem.js';

export type JsonSchema = boolean | { [keyword: string]: unknown };

/** null when the schema can be enforced, else the first problem found (invalid, unsatisfiable, too large). */
export function findUnsupportedSchemaFeature(schema: unknown): SchemaProblem | null {
  try {
    resolveSchema(schema);
    return null;
  } catch (err) {
    if (err instanceof UnsupportedSchemaError) return err.problem;
    throw err;
  }
}

const ANY: SchemaNode = { kind: 'any' };

/** How many times one definition may be unrolled inside itself: recursive schemas are cut there. */
const RECURSION_DEPTH = 3;
/** `$ref` and `allOf` chains that nest deeper than this consume no value: the schema is refused. */
const MAX_FLATTEN_DEPTH = 32;

/**
 * The schema as a tree of nodes the grammar emitter writes. The tree may be narrower than the schema
 * (every value it allows conforms to what it enforces); keywords it cannot hold are left to the check
 * on the result. Throws UnsupportedSchemaError for an invalid, unsatisfiable or too large schema.
 */
export function resolveSchema(schema: unknown): SchemaNode {
  checkSchemaSyntax(schema);
  const node = new SchemaResolver(schema).node(schema, '');
  if (!node)
    fail('', 'schema', 'no value conforms to the schema (as far as it can be written within bounds)', 'unsatisfiable');
  return node;
}

type Flat = Record<string, unknown>;

/** A node, or null where no value can be written. */
type Maybe = SchemaNode | null;

class SchemaResolver {
  private parts = 0;
  /** Definitions being resolved, by how deep each is nested in itself. */
  private readonly active = new Map<object, number>();
  private readonly cache = new Map<object, Maybe>();
  private cuts = 0;

  constructor(private readonly root: unknown) {}

  node(schema: unknown, path: string): Maybe {
    if (++this.parts > MAX_SCHEMA_PARTS)
      fail(
        path,
        'schema size',
        `the schema expands to more than ${MAX_SCHEMA_PARTS} parts; it is too large to enforce`,
        'too_large',
      );
    if (schema === true) return ANY;
    if (!isObject(schema)) return null;
    // `{"$ref": ...}` alone (annotations aside) is resolved once for all its uses.
    const target = typeof schema.$ref === 'string' ? resolvePointer(this.root, schema.$ref) : undefined;
    const plainRef = isObject(target) && Object.keys(schema).every((k) => k === '$ref' || !constrains(k));
    if (plainRef && this.cache.has(target)) return this.cache.get(target)!;

    const targets: object[] = [];
    const flat = this.flatten(schema, path, 0, targets);
    if (!flat) return null;
    // A definition inside itself: unrolled a few times, then that branch is cut (left out where optional).
    if (targets.some((t) => (this.active.get(t) ?? 0) >= RECURSION_DEPTH)) {
      this.cuts++;
      return null;
    }
    const cutsBefore = this.cuts;
    for (const t of targets) this.active.set(t, (this.active.get(t) ?? 0) + 1);
    try {
      const node = this.flat(flat, schema, path);
      if (plainRef && this.cuts === cutsBefore) {
        const named =
          node && (node.kind === 'object' || node.kind === 'array')
            ? { ...node, name: refName(schema.$ref as string) }
            : node;
        this.cache.set(target, named);
        return named;
      }
      return node;
    } finally {
      for (const t of targets) this.active.set(t, this.active.get(t)! - 1);
    }
  }

  /** The schema with its `$ref` and `allOf` merged in; null when a part of it is `false`. */
  private flatten(schema: Flat, path: string, depth: number, targets: object[]): Flat | null {
    if (depth > MAX_FLATTEN_DEPTH)
      fail(path, '$ref', '`$ref` / `allOf` refer to each other without end', 'unsatisfiable');
    const { $ref, allOf, ...rest } = schema;
    let out: Flat = rest;
    const parts: unknown[] = [];
    if (typeof $ref === 'string') {
      const target = resolvePointer(this.root, $ref);
      if (target === undefined)
        fail(
          at(path, '$ref'),
          '$ref',
          `\`${$ref}\` does not resolve within the schema (only local references are followed)`,
          'unsupported',
        );
      if (isObject(target)) targets.push(target);
      parts.push(target);
    }
    if (Array.isArray(allOf)) parts.push(...allOf);
    for (const part of parts) {
      if (part === false) return null;
      if (!isObject(part)) continue;
      const inner = this.flatten(part, path, depth + 1, targets);
      if (!inner) return null;
      out = merge(out, inner);
    }
    return out;
  }

  /** A flattened schema; `original` is what the result check holds enum values to. */
  private flat(s: Flat, original: Flat, path: string): Maybe {
    const branches = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : null;
    if (branches) {
      // Each branch with the keywords beside it. oneOf is written as anyOf: the result check counts its matches.
      const { anyOf: _a, oneOf: _o, ...base } = s;
      const plain = !Object.keys(base).some(constrains);
      const options = branches.map((b, i) =>
        this.node(plain ? b : { allOf: [base, b] }, at(at(path, s.anyOf ? 'anyOf' : 'oneOf'), String(i))),
      );
      return union(options);
    }
    if (Object.hasOwn(s, 'const') || Array.isArray(s.enum)) {
      const values: unknown[] = Object.hasOwn(s, 'const') ? [s.const] : (s.enum as unknown[]);
      // Only values the whole schema accepts: enum and const hold exactly, whatever else sits beside them.
      const kept = values.filter((v) => checkJson(v, original, this.root) === null);
      return union([...new Set(kept.map(asciiJson))].map((json): SchemaNode => ({ kind: 'literal', json })));
    }
    const keywords = Object.keys(s);
    const types = s.type === undefined ? inferTypes(keywords) : readTypes(s.type, at(path, 'type'));
    if (s.type === undefined && types.length === 0) return ANY;
    return union(types.map((t) => this.typed(t, s, path)));
  }

  private typed(type: TypeName, s: Flat, path: string): Maybe {
    switch (type) {
      case 'string':
        return stringNode(s);
      case 'number':
      case 'integer':
        return numberNode(s, type === 'integer');
      case 'boolean':
        return union([
          { kind: 'literal', json: 'true' },
          { kind: 'literal', json: 'false' },
        ]);
      case 'null':
        return { kind: 'literal', json: 'null' };
      case 'object':
        return this.object(s, path);
      case 'array':
        return this.array(s, path);
    }
  }

  private object(s: Flat, path: string): Maybe {
    const props = isObject(s.properties) ? s.properties : {};
    const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
    const patterns = isObject(s.patternProperties) ? Object.entries(s.patternProperties) : [];
    const additional = s.additionalProperties;
    const minProperties = count(s, 'minProperties') ?? 0;
    const maxProperties = count(s, 'maxProperties');
    // What a property not in `properties` must be: the patterns its name matches, else additionalProperties.
    const undeclared = (key: string): unknown => {
      const matching = patterns
        .filter(([p]) => {
          const re = schemaRegExp(p);
          return re !== null && matches(re, key);
        })
        .map(([, sub]) => sub);
      if (matching.length) return { allOf: matching };
      return additional ?? true;
    };

    const properties: PropertyNode[] = [];
    for (const [key, sub] of Object.entries(props)) {
      const value = this.node(sub, at(at(path, 'properties'), key));
      if (value) properties.push({ keyJson: asciiJson(key), value, required: required.has(key) });
      else if (required.has(key)) return null;
    }
    for (const key of required) {
      if (Object.hasOwn(props, key)) continue;
      const value = this.node(undeclared(key), at(path, 'required'));
      if (!value) return null;
      properties.push({ keyJson: asciiJson(key), value, required: true });
    }
    // dependentRequired: a required property's dependents are required too.
    const dependent = isObject(s.dependentRequired) ? s.dependentRequired : {};
    for (let grew = true; grew;) {
      grew = false;
      for (const p of properties) {
        const needs = p.required ? dependent[JSON.parse(p.keyJson) as string] : undefined;
        if (!Array.isArray(needs)) continue;
        for (const n of needs) {
          const q = properties.find((x) => x.keyJson === asciiJson(n));
          if (q && !q.required) grew = q.required = true;
        }
      }
    }

    if (properties.length === 0 && required.size === 0) {
      // A pure map: free names, values of additionalProperties (or of the patterns: names are checked after).
      const values =
        additional === false
          ? null
          : patterns.length && additional === undefined
            ? { anyOf: patterns.map(([, sub]) => sub) }
            : (additional ?? true);
      const value = values === null ? null : this.node(values, at(path, 'additionalProperties'));
      if (!value) return minProperties > 0 ? null : { kind: 'object', properties: [], additional: null };
      if (maxProperties !== null && maxProperties < minProperties) return null;
      return { kind: 'object', properties: [], additional: value, minKeys: minProperties, maxKeys: maxProperties };
    }

    // Declared properties only (extra ones are optional). minProperties makes optional ones required, in
    // order; maxProperties leaves out the optional ones past it.
    let requiredCount = properties.filter((p) => p.required).length;
    for (const p of properties) {
      if (requiredCount >= minProperties) break;
      if (p.required) continue;
      p.required = true;
      requiredCount++;
    }
    if (requiredCount < minProperties) return null;
    if (maxProperties !== null) {
      if (requiredCount > maxProperties) return null;
      let room = maxProperties - requiredCount;
      const kept = properties.filter((p) => p.required || room-- > 0);
      return { kind: 'object', properties: kept, additional: null };
    }
    return { kind: 'object', properties, additional: null };
  }

  private array(s: Flat, path: string): Maybe {
    const minItems = count(s, 'minItems') ?? 0;
    const maxItems = count(s, 'maxItems');
    if (maxItems !== null && minItems > maxItems) return null;
    // Draft 2020-12 `prefixItems` + `items`, or the older array-form `items` + `additionalItems`.
    const prefixSchemas = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : [];
    const rest = Array.isArray(s.items) ? s.additionalItems : s.items;
    const prefix: SchemaNode[] = [];
    let cut = false;
    for (const [i, sub] of prefixSchemas.entries()) {
      if (maxItems !== null && i >= maxItems) break;
      const node = this.node(sub, at(at(path, 'prefixItems'), String(i)));
      if (!node) {
        // Items from here on cannot be written: the array stops before them, if it may.
        if (i < minItems) return null;
        cut = true;
        break;
      }
      prefix.push(node);
    }
    let items: Maybe = null;
    if (!cut) {
      // After a tuple, extra items are optional: written only when minItems needs them.
      if (rest !== undefined) items = this.node(rest, at(path, 'items'));
      else if (prefix.length === 0 || minItems > prefix.length) items = ANY;
    }
    if (items === null && minItems > prefix.length) return null;
    return { kind: 'array', prefix, items, minItems, maxItems };
  }
}
