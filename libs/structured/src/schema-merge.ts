import { checkJson } from './json-check.js';
import { isObject } from './json-values.js';
import { intersectTypes, readTypes } from './schema-keywords.js';

type Flat = Record<string, unknown>;

/**
 * Two schemas' keywords as one (for `allOf` and `$ref` beside other keywords). Bounds take the tighter,
 * types and enums their intersection, properties and required their union; where two keywords cannot be
 * merged the first stands, and the result check holds the value to both.
 */
export function merge(a: Flat, b: Flat): Flat {
  const out: Flat = { ...a };
  for (const [k, v] of Object.entries(b)) {
    if (!Object.hasOwn(out, k)) {
      out[k] = v;
      continue;
    }
    const u = out[k];
    switch (k) {
      case 'type': {
        const types = intersectTypes(readTypes(u, k), readTypes(v, k));
        out.type = types;
        break;
      }
      case 'properties':
      case 'patternProperties':
      case 'dependentRequired':
        if (isObject(u) && isObject(v)) {
          const m: Flat = { ...u };
          for (const [name, sub] of Object.entries(v))
            m[name] = !Object.hasOwn(m, name)
              ? sub
              : Array.isArray(sub) && Array.isArray(m[name])
                ? [...new Set([...(m[name] as string[]), ...sub])]
                : { allOf: [m[name], sub] };
          out[k] = m;
        }
        break;
      case 'required':
        out.required = [...new Set([...(u as string[]), ...(v as string[])])];
        break;
      case 'minimum':
      case 'minLength':
      case 'minItems':
      case 'minProperties':
        out[k] = Math.max(u as number, v as number);
        break;
      case 'maximum':
      case 'maxLength':
      case 'maxItems':
      case 'maxProperties':
        out[k] = Math.min(u as number, v as number);
        break;
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        if (typeof u === 'number' && typeof v === 'number')
          out[k] = k === 'exclusiveMinimum' ? Math.max(u, v) : Math.min(u, v);
        break;
      case 'items':
      case 'additionalProperties':
      case 'additionalItems':
      case 'propertyNames':
        if (!Array.isArray(u) && !Array.isArray(v)) out[k] = u === false || v === false ? false : { allOf: [u, v] };
        break;
      case 'prefixItems':
        if (Array.isArray(u) && Array.isArray(v))
          out[k] = Array.from({ length: Math.max(u.length, v.length) }, (_, i) =>
            i < u.length && i < v.length ? { allOf: [u[i], v[i]] } : (u[i] ?? v[i]),
          );
        break;
      case 'enum':
        if (Array.isArray(u) && Array.isArray(v))
          out.enum = u.filter((x) => v.some((y) => checkJson(x, { const: y }) === null));
        break;
      case 'const':
        if (checkJson(u, { const: v }) !== null) out.enum = [];
        break;
      // Anything else: the first stands in the grammar; the result check holds both.
    }
  }
  return out;
}
