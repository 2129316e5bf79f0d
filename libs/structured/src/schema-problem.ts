/** A schema feature this server cannot enforce: `path` is a JSON pointer-ish path like "properties.age.minimum", `feature` the keyword (e.g. "minimum", "pattern", "recursive $ref"). */
export interface SchemaProblem {
  path: string;
  feature: string;
  message: string;
}

export class UnsupportedSchemaError extends Error {
  constructor(readonly problem: SchemaProblem) {
    super(`${problem.path ? `${problem.path}: ` : ''}${problem.message}`);
    this.name = 'UnsupportedSchemaError';
  }
}

/** `key` under `path`, spelt as a SchemaProblem's path. */
export const at = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** Stops resolving at the first feature the grammar cannot enforce. */
export function fail(path: string, feature: string, message: string): never {
  throw new UnsupportedSchemaError({ path, feature, message });
}
