import { isObject } from './json-values.js';
import { resolvePointer } from './schema-pointer.js';
import { FORMAT_CHECKS, matches, schemaRegExp } from './string-checks.js';

export { matches, schemaRegExp } from './string-checks.js';

/**
 * Checks a JSON value against a JSON Schema (draft 2020-12, with the older spellings of `items`,
 * `additionalItems`, `dependencies` and boolean `exclusiveMinimum`/`exclusiveMaximum`). It is the
 * check made on a result after generation, for the keywords a grammar cannot hold (numeric bounds,
 * `multipleOf`, `pattern`, `not`, `if`/`then`/`else`, `uniqueItems`, `contains`...). `format` is
 * checked for the formats listed in FORMAT_CHECKS and otherwise taken as an annotation, as the
 * specification allows. Returns null when the value conforms, else where and why it does not.
 *
 * Work is bounded: past MAX_STEPS subschema visits the check stops and reports the value as conforming
 * (a grammar already shaped it); $ref cycles that consume no part of the value stop at MAX_DEPTH.
 */
export function checkJson(value: unknown, schema: unknown, root: unknown = schema): string | null {
  const checker = new JsonChecker(root);
  try {
    return checker.check(value, schema, '', 0);
  } catch (err) {
    if (err === GAVE_UP) return null;
    throw err;
  }
}

const MAX_STEPS = 200_000;
const MAX_DEPTH = 256;
const GAVE_UP = Symbol('gave up');

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && equal(a[k], b[k]));
  }
  return false;
}

const enumKeys = new WeakMap<unknown[], Set<string>>();
const scalarKey = (v: unknown) => (v === null || typeof v !== 'object' ? `${typeof v}:${String(v)}` : null);

/** Whether `value` is one of `values`: scalars by a set kept per enum, so a long enum costs one look-up. */
function inEnum(values: unknown[], value: unknown): boolean {
  const key = scalarKey(value);
  if (key === null) return values.some((v) => equal(v, value));
  let keys = enumKeys.get(values);
  if (!keys) enumKeys.set(values, (keys = new Set(values.map(scalarKey).filter((k) => k !== null))));
  return keys.has(key);
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function hasType(value: unknown, type: unknown): boolean {
  if (type === 'integer') return typeof value === 'number' && Number.isInteger(value);
  return typeOf(value) === type;
}

const num = (v: unknown): v is number => typeof v === 'number';

/** Code points, as JSON Schema counts string length. */
const length = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

const sub = (path: string, key: string | number) => `${path}/${String(key)}`;

class JsonChecker {
  private steps = 0;

  constructor(private readonly root: unknown) {}

  check(value: unknown, schema: unknown, path: string, depth: number): string | null {
    if (++this.steps > MAX_STEPS || depth > MAX_DEPTH) throw GAVE_UP;
    if (schema === true || schema === undefined) return null;
    if (schema === false) return `${path || '/'}: no value is allowed here`;
    if (!isObject(schema)) return null;
    const s = schema;
    const at = path || '/';
    const fail = (why: string) => `${at}: ${why}`;

    if (typeof s.$ref === 'string') {
      const target = resolvePointer(this.root, s.$ref);
      if (target !== undefined) {
        const problem = this.check(value, target, path, depth + 1);
        if (problem) return problem;
      }
    }
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? s.type : [s.type];
      if (!types.some((t) => hasType(value, t))) return fail(`expected ${types.join(' or ')}, got ${typeOf(value)}`);
    }
    if (Array.isArray(s.enum) && !inEnum(s.enum, value)) return fail('not one of the enum values');
    if (Object.hasOwn(s, 'const') && !equal(s.const, value)) return fail('not the const value');

    for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
      const list = s[key];
      if (!Array.isArray(list)) continue;
      const problems = list.map((branch) => this.check(value, branch, path, depth + 1));
      const passed = problems.filter((p) => p === null).length;
      if (key === 'allOf' && passed < list.length) return problems.find((p) => p !== null)!;
      if (key === 'anyOf' && passed === 0) return fail('matches none of anyOf');
      if (key === 'oneOf' && passed !== 1) return fail(`matches ${passed} of oneOf's branches, not exactly one`);
    }
    if (s.not !== undefined && this.check(value, s.not, path, depth + 1) === null) return fail('matches `not`');
    if (s.if !== undefined) {
      const branch = this.check(value, s.if, path, depth + 1) === null ? s.then : s.else;
      const problem = this.check(value, branch, path, depth + 1);
      if (problem) return problem;
    }

    if (num(value)) return this.number(value, s, fail);
    if (typeof value === 'string') return this.string(value, s, fail);
    if (Array.isArray(value)) return this.array(value, s, path, depth, fail);
    if (isObject(value)) return this.object(value, s, path, depth, fail);
    return null;
  }

  private number(value: number, s: Record<string, unknown>, fail: (why: string) => string): string | null {
    if (num(s.minimum) && (s.exclusiveMinimum === true ? value <= s.minimum : value < s.minimum))
      return fail(`below the minimum ${s.minimum}`);
    if (num(s.maximum) && (s.exclusiveMaximum === true ? value >= s.maximum : value > s.maximum))
      return fail(`above the maximum ${s.maximum}`);
    if (num(s.exclusiveMinimum) && value <= s.exclusiveMinimum)
      return fail(`not above the exclusive minimum ${s.exclusiveMinimum}`);
    if (num(s.exclusiveMaximum) && value >= s.exclusiveMaximum)
      return fail(`not below the exclusive maximum ${s.exclusiveMaximum}`);
    if (num(s.multipleOf) && s.multipleOf > 0) {
      const q = value / s.multipleOf;
      if (Math.abs(q - Math.round(q)) > 1e-9 * Math.max(1, Math.abs(q)))
        return fail(`not a multiple of ${s.multipleOf}`);
    }
    return null;
  }

  private string(value: string, s: Record<string, unknown>, fail: (why: string) => string): string | null {
    if (num(s.minLength) && length(value) < s.minLength) return fail(`shorter than ${s.minLength} characters`);
    if (num(s.maxLength) && length(value) > s.maxLength) return fail(`longer than ${s.maxLength} characters`);
    const re = typeof s.pattern === 'string' ? schemaRegExp(s.pattern) : null;
    if (re && !matches(re, value)) return fail(`does not match the pattern ${s.pattern}`);
    if (typeof s.format === 'string' && FORMAT_CHECKS[s.format]?.(value) === false)
      return fail(`not a valid ${s.format}`);
    return null;
  }

  private array(
    value: unknown[],
    s: Record<string, unknown>,
    path: string,
    depth: number,
    fail: (why: string) => string,
  ): string | null {
    if (num(s.minItems) && value.length < s.minItems) return fail(`fewer than ${s.minItems} items`);
    if (num(s.maxItems) && value.length > s.maxItems) return fail(`more than ${s.maxItems} items`);
    // Draft 2020-12 `prefixItems` + `items`, or the older array-form `items` + `additionalItems`.
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : [];
    const rest = Array.isArray(s.items) ? s.additionalItems : s.items;
    for (const [i, item] of value.entries()) {
      const problem = this.check(item, i < prefix.length ? prefix[i] : rest, sub(path, i), depth + 1);
      if (problem) return problem;
    }
    if (s.uniqueItems === true) {
      for (let i = 0; i < value.length; i++)
        for (let j = i + 1; j < value.length; j++)
          if (equal(value[i], value[j])) return fail(`items ${i} and ${j} are equal`);
    }
    if (s.contains !== undefined) {
      const matches = value.filter((item, i) => this.check(item, s.contains, sub(path, i), depth + 1) === null).length;
      const least = num(s.minContains) ? s.minContains : 1;
      if (matches < least) return fail(`fewer than ${least} items match \`contains\``);
      if (num(s.maxContains) && matches > s.maxContains)
        return fail(`more than ${s.maxContains} items match \`contains\``);
    }
    return null;
  }

  private object(
    value: Record<string, unknown>,
    s: Record<string, unknown>,
    path: string,
    depth: number,
    fail: (why: string) => string,
  ): string | null {
    const keys = Object.keys(value);
    if (num(s.minProperties) && keys.length < s.minProperties) return fail(`fewer than ${s.minProperties} properties`);
    if (num(s.maxProperties) && keys.length > s.maxProperties) return fail(`more than ${s.maxProperties} properties`);
    if (Array.isArray(s.required)) {
      const missing = s.required.find((k) => typeof k === 'string' && !Object.hasOwn(value, k));
      if (missing !== undefined) return fail(`missing the required property "${String(missing)}"`);
    }
    const properties = isObject(s.properties) ? s.properties : {};
    const patterns = isObject(s.patternProperties) ? Object.entries(s.patternProperties) : [];
    for (const key of keys) {
      const at = sub(path, key);
      if (s.propertyNames !== undefined) {
        const problem = this.check(key, s.propertyNames, at, depth + 1);
        if (problem) return `${at}: the property name is not allowed (${problem})`;
      }
      let matched = false;
      if (Object.hasOwn(properties, key)) {
        matched = true;
        const problem = this.check(value[key], properties[key], at, depth + 1);
        if (problem) return problem;
      }
      for (const [pattern, schema] of patterns) {
        const re = schemaRegExp(pattern);
        if (!re || !matches(re, key)) continue;
        matched = true;
        const problem = this.check(value[key], schema, at, depth + 1);
        if (problem) return problem;
      }
      if (!matched && s.additionalProperties !== undefined) {
        if (s.additionalProperties === false) return fail(`the property "${key}" is not allowed`);
        const problem = this.check(value[key], s.additionalProperties, at, depth + 1);
        if (problem) return problem;
      }
    }
    // `dependencies` is the draft-7 spelling of both.
    const dependent = { ...(isObject(s.dependencies) ? s.dependencies : {}) };
    if (isObject(s.dependentRequired)) Object.assign(dependent, s.dependentRequired);
    if (isObject(s.dependentSchemas)) Object.assign(dependent, s.dependentSchemas);
    for (const [key, needs] of Object.entries(dependent)) {
      if (!Object.hasOwn(value, key)) continue;
      if (Array.isArray(needs)) {
        const missing = needs.find((k) => typeof k === 'string' && !Object.hasOwn(value, k));
        if (missing !== undefined) return fail(`"${key}" is present, so "${String(missing)}" is required`);
      } else {
        const problem = this.check(value, needs, path, depth + 1);
        if (problem) return problem;
      }
    }
    return null;
  }
}
