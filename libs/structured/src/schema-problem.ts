/**
 * Why a schema cannot be enforced: `invalid` (the JSON Schema specification refuses it),
 * `unsatisfiable` (no value, or none this server can write, conforms), `too_large` (past the
 * documented limits on schema and grammar size), `unsupported` (a reference this server cannot
 * follow, such as a remote URL).
 */
export type SchemaProblemKind = 'invalid' | 'unsatisfiable' | 'too_large' | 'unsupported';

/** A schema this server refuses: `path` is a JSON pointer-ish path like "properties.age.minimum", `feature` the keyword (e.g. "minimum", "$ref"). */
export interface SchemaProblem {
  path: string;
  feature: string;
  message: string;
  kind: SchemaProblemKind;
}

export class UnsupportedSchemaError extends Error {
  constructor(readonly problem: SchemaProblem) {
    super(`${problem.path ? `${problem.path}: ` : ''}${problem.message}`);
    this.name = 'UnsupportedSchemaError';
  }
}

/** `key` under `path`, spelt as a SchemaProblem's path. */
export const at = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** Stops resolving at the first problem found. */
export function fail(path: string, feature: string, message: string, kind: SchemaProblemKind): never {
  throw new UnsupportedSchemaError({ path, feature, message, kind });
}
