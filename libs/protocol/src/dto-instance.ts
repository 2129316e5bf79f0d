import { plainToInstance, type ClassConstructor } from 'class-transformer';

/**
 * class-transformer makes each object's keys unique with `indexOf`, in time quadratic in the number of
 * keys: a JSON Schema of 20,000 properties held the event loop for seconds, and /health with it. An
 * object with more keys than this is kept out of its walk.
 */
export const WIDE_OBJECT_KEYS = 64;

type Plain = Record<string, unknown>;
type Key = string | number;

const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);
const isWide = (v: unknown): v is Plain => isPlain(v) && Object.keys(v).length > WIDE_OBJECT_KEYS;

/** A wide object taken out of the value before class-transformer walks it: where it was, and itself. */
interface SetAside {
  holder: Plain | unknown[];
  key: Key;
  path: Key[];
  value: Plain;
}

/** Puts an empty object in place of each wide object below `root` (those inside one stay in it). */
function setAside(root: Plain): SetAside[] {
  const found: SetAside[] = [];
  const stack: Array<{ value: Plain | unknown[]; path: Key[] }> = [{ value: root, path: [] }];
  while (stack.length) {
    const { value, path } = stack.pop()!;
    const entries: Array<[Key, unknown]> = Array.isArray(value) ? [...value.entries()] : Object.entries(value);
    for (const [key, child] of entries) {
      if (isWide(child)) {
        found.push({ holder: value, key, path: [...path, key], value: child });
        (value as Record<Key, unknown>)[key] = {};
      } else if (typeof child === 'object' && child !== null) {
        stack.push({ value: child as Plain | unknown[], path: [...path, key] });
      }
    }
  }
  return found;
}

/** The fields a DTO class declares: class fields are defined on construction, so an empty instance lists them. */
const declared = new WeakMap<ClassConstructor<object>, ReadonlySet<string>>();
function fieldsOf(cls: ClassConstructor<object>): ReadonlySet<string> {
  let fields = declared.get(cls);
  if (!fields) declared.set(cls, (fields = new Set(Object.keys(new cls()))));
  return fields;
}

/**
 * `plainToInstance(cls, plain)`, in time linear in the size of `plain`. Wide objects are set aside while
 * class-transformer walks the rest, then put back where it left them: as they are where the DTO holds
 * free-form JSON (a schema, metadata), as instances of the DTO's class where it declares one, made from
 * the fields that class declares (unknown fields are ignored anyway, and there are at most a few dozen).
 */
export function toDtoInstance<T extends object>(cls: ClassConstructor<T>, plain: Plain): T {
  const fields = fieldsOf(cls);
  const source = isWide(plain) ? Object.fromEntries(Object.entries(plain).filter(([k]) => fields.has(k))) : plain;
  const aside = setAside(source);
  let instance: T;
  try {
    instance = plainToInstance(cls, source, { enableImplicitConversion: false });
  } finally {
    // The caller's value is left as it came.
    for (const { holder, key, value } of aside) (holder as Record<Key, unknown>)[key] = value;
  }
  for (const { path, value } of aside) {
    let holder: unknown = instance;
    for (const key of path.slice(0, -1))
      holder = typeof holder === 'object' && holder !== null ? (holder as Record<Key, unknown>)[key] : undefined;
    if (typeof holder !== 'object' || holder === null) continue;
    const key = path.at(-1)!;
    const made = (holder as Record<Key, unknown>)[key];
    if (!isPlain(made)) continue;
    (holder as Record<Key, unknown>)[key] =
      made.constructor === Object ? value : toDtoInstance(made.constructor as ClassConstructor<object>, value);
  }
  return instance;
}
