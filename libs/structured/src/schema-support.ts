import { asciiJson, ObjectNode, PropertyNode, SchemaNode } from './schema-node.js';
import { isObject } from './json-values.js';
import {
  ANNOTATIONS,
  checkNumericKeywords,
  COMBINATORS,
  count,
  dedupe,
  hasType,
  inferTypes,
  isJsonValue,
  readTypes,
  stringNode,
  TYPE_KEYWORDS,
  TypeName,
} from './schema-keywords.js';
import { at, fail, SchemaProblem, UnsupportedSchemaError } from './schema-problem.js';

export { UnsupportedSchemaError } from './schema-problem.js';
export type { SchemaProblem } from './schema-problem.js';

export type JsonSchema = boolean | { [keyword: string]: unknown };

/** null when every keyword in the schema is supported, else the first problem found. */
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

/** The schema as a tree of supported nodes; throws UnsupportedSchemaError at the first unsupported feature. */
export function resolveSchema(schema: unknown): SchemaNode {
  return new SchemaResolver(schema).node(schema, '');
}

class SchemaResolver {
  private readonly defs = new Map<string, SchemaNode>();
  private readonly resolving = new Set<string>();

  constructor(private readonly root: unknown) {}

  node(schema: unknown, path: string): SchemaNode {
    if (schema === true) return ANY;
    if (schema === false) fail(path, 'false schema', 'the `false` schema accepts no value');
    if (!isObject(schema)) fail(path, 'schema', 'a schema must be an object or a boolean');

    const keywords = Object.keys(schema).filter((k) => !ANNOTATIONS.has(k));
    for (const k of keywords) {
      if (!Object.hasOwn(TYPE_KEYWORDS, k) && k !== 'type' && !COMBINATORS.includes(k))
        fail(at(path, k), k, `\`${k}\` is not supported`);
    }
    checkNumericKeywords(schema, path);

    const combinator = COMBINATORS.find((k) => Object.hasOwn(schema, k));
    if (combinator) {
      // Combining would need an intersection of grammars; only `type` narrows enum/const.
      const allowed = combinator === 'const' || combinator === 'enum' ? ['type', combinator] : [combinator];
      const extra = keywords.find((k) => !allowed.includes(k));
      if (extra) fail(at(path, extra), extra, `\`${extra}\` cannot be combined with \`${combinator}\``);
      return this.combinator(combinator, schema, path);
    }

    const types = schema.type === undefined ? inferTypes(keywords) : readTypes(schema.type, at(path, 'type'));
    if (types.length === 0) return ANY;
    // Formats on numbers (int32, double...) would constrain their range, which the grammar cannot.
    if (Object.hasOwn(schema, 'format') && !types.includes('string'))
      fail(at(path, 'format'), 'format', `format "${String(schema.format)}" is only supported on strings`);
    const options = dedupe(types.map((t) => this.typed(t, schema, path)));
    return options.length === 1 ? options[0] : { kind: 'union', options };
  }

  private combinator(keyword: string, schema: Record<string, unknown>, path: string): SchemaNode {
    const value = schema[keyword];
    const p = at(path, keyword);
    switch (keyword) {
      case '$ref':
        return this.ref(value, p);
      case 'allOf':
        if (!Array.isArray(value) || value.length !== 1)
          fail(p, 'allOf', '`allOf` is only supported with a single schema');
        return this.node(value[0], at(p, '0'));
      case 'anyOf':
      case 'oneOf': {
        // oneOf is treated as anyOf: the grammar cannot check that exactly one branch matches,
        // so oneOf schemas should have disjoint branches.
        if (!Array.isArray(value) || value.length === 0) fail(p, keyword, `\`${keyword}\` must be a non-empty array`);
        const options = dedupe(value.map((s, i) => this.node(s, at(p, String(i)))));
        return options.length === 1 ? options[0] : { kind: 'union', options };
      }
      default: {
        const values = keyword === 'const' ? [value] : value;
        if (!Array.isArray(values) || values.length === 0) fail(p, keyword, '`enum` must be a non-empty array');
        const types = schema.type === undefined ? [] : readTypes(schema.type, at(path, 'type'));
        const kept = values.filter((v) => isJsonValue(v) && (types.length === 0 || types.some((t) => hasType(v, t))));
        if (kept.length === 0) fail(p, keyword, `no \`${keyword}\` value matches the schema's type`);
        const literals = [...new Set(kept.map(asciiJson))].map((json): SchemaNode => ({ kind: 'literal', json }));
        return literals.length === 1 ? literals[0] : { kind: 'union', options: literals };
      }
    }
  }

  private ref(ref: unknown, path: string): SchemaNode {
    if (ref === '#')
      fail(path, 'recursive $ref', '`#` refers to the whole schema; recursive schemas cannot be bounded');
    const match = typeof ref === 'string' ? /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref) : null;
    if (!match) fail(path, '$ref', 'only `#/$defs/<name>` and `#/definitions/<name>` references are supported');
    const [, container, encoded] = match;
    const name = decodeURIComponent(encoded).replace(/~1/g, '/').replace(/~0/g, '~');
    const key = `${container}/${name}`;
    const cached = this.defs.get(key);
    if (cached) return cached;
    if (this.resolving.has(key))
      fail(path, 'recursive $ref', `\`${ref}\` refers to itself; recursive schemas cannot be bounded`);
    const defs = isObject(this.root) ? this.root[container] : undefined;
    if (!isObject(defs) || !Object.hasOwn(defs, name)) fail(path, '$ref', `\`${ref}\` does not resolve`);

    this.resolving.add(key);
    const node = this.node(defs[name], `${container}.${name}`);
    this.resolving.delete(key);
    // Shared by every reference, so the emitter makes one rule for it.
    const named = node.kind === 'object' || node.kind === 'array' ? { ...node, name } : node;
    this.defs.set(key, named);
    return named;
  }

  private typed(type: TypeName, schema: Record<string, unknown>, path: string): SchemaNode {
    switch (type) {
      case 'string':
        return stringNode(schema, path);
      case 'number':
      case 'integer':
        return { kind: 'number', integer: type === 'integer', nonNegative: schema.minimum === 0 };
      case 'boolean':
        return {
          kind: 'union',
          options: [
            { kind: 'literal', json: 'true' },
            { kind: 'literal', json: 'false' },
          ],
        };
      case 'null':
        return { kind: 'literal', json: 'null' };
      case 'object':
        return this.object(schema, path);
      case 'array':
        return this.array(schema, path);
    }
  }

  private object(schema: Record<string, unknown>, path: string): ObjectNode {
    const props = schema.properties ?? {};
    if (!isObject(props)) fail(at(path, 'properties'), 'properties', '`properties` must be an object');
    const required = schema.required ?? [];
    if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) {
      fail(at(path, 'required'), 'required', '`required` must be an array of strings');
    }
    const additional = schema.additionalProperties;
    const additionalNode =
      additional === undefined || additional === true || additional === false
        ? null
        : this.node(additional, at(path, 'additionalProperties'));

    const properties: PropertyNode[] = Object.entries(props).map(([key, sub]) => ({
      keyJson: asciiJson(key),
      value: this.node(sub, at(at(path, 'properties'), key)),
      required: required.includes(key),
    }));
    // Required names without a `properties` entry take the additionalProperties schema.
    for (const key of new Set(required)) {
      if (Object.hasOwn(props, key)) continue;
      if (additional === false)
        fail(
          at(path, 'required'),
          'required',
          `required property "${key}" is forbidden by additionalProperties: false`,
        );
      properties.push({ keyJson: asciiJson(key), value: additionalNode ?? ANY, required: true });
    }
    // Extra properties are optional, so output is strict (declared properties only)
    // unless the object is a pure map: free keys could collide with declared ones.
    return { kind: 'object', properties, additional: properties.length === 0 ? additionalNode : null };
  }

  private array(schema: Record<string, unknown>, path: string): SchemaNode {
    const minItems = count(schema, 'minItems', path) ?? 0;
    const maxItems = count(schema, 'maxItems', path);
    if (maxItems !== null && minItems > maxItems)
      fail(at(path, 'maxItems'), 'maxItems', '`maxItems` is below `minItems`');
    if (schema.uniqueItems !== undefined && schema.uniqueItems !== false)
      fail(at(path, 'uniqueItems'), 'uniqueItems', '`uniqueItems` is not supported');

    const prefixSchemas = schema.prefixItems ?? [];
    if (!Array.isArray(prefixSchemas)) fail(at(path, 'prefixItems'), 'prefixItems', '`prefixItems` must be an array');
    const prefix = prefixSchemas.map((s, i) => this.node(s, at(at(path, 'prefixItems'), String(i))));

    if (Array.isArray(schema.items))
      fail(at(path, 'items'), 'items', 'array-form `items` is not supported; use `prefixItems`');
    let items: SchemaNode | null;
    if (schema.items === false) items = null;
    else if (schema.items !== undefined) items = this.node(schema.items, at(path, 'items'));
    // After a tuple, extra items are optional: emit them only when minItems needs them.
    else items = prefix.length === 0 || minItems > prefix.length ? ANY : null;
    if (items === null && minItems > prefix.length)
      fail(at(path, 'minItems'), 'minItems', '`minItems` exceeds the items allowed');
    return { kind: 'array', prefix, items, minItems, maxItems };
  }
}
