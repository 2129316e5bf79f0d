/**
 * A JSON object: not null, not an array. Shared by every layer that reads JSON it did not write
 * (request bodies, batch lines, JSON Schemas), so each checks the same way.
 */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
