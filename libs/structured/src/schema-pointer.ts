import { isObject } from './json-values.js';

/**
 * The subschema a local `$ref` names: `#` (the whole schema) or a JSON pointer such as
 * `#/$defs/point` or `#/properties/a/items`. Undefined when it names nothing here (a remote
 * reference, an `$anchor`, a missing path).
 */
export function resolvePointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(key)) node = node[Number(key)];
    else if (isObject(node) && Object.hasOwn(node, key)) node = node[key];
    else return undefined;
  }
  return node;
}
