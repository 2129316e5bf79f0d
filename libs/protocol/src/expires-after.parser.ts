/** The longest expiry OpenAI allows a file (30 days), in seconds. */
export const MAX_EXPIRY_SECONDS = 2_592_000;

export type ParsedExpiry = { ok: true; seconds: number } | { ok: false; message: string };

/**
 * OpenAI's expiry of a file, `{ anchor: "created_at", seconds: N }`, as a batch's `output_expires_after`
 * and an upload's `expires_after` carry it; `seconds` from `minSeconds` (3600 in OpenAI's API) to 30
 * days. Multipart uploads give `seconds` as text, so a string of digits counts as the number.
 */
export function parseExpiresAfter(value: unknown, param: string, minSeconds: number): ParsedExpiry {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, message: `${param} must be an object: { "anchor": "created_at", "seconds": N }.` };
  const { anchor, seconds } = value as Record<string, unknown>;
  if (anchor !== 'created_at') return { ok: false, message: `${param}.anchor must be "created_at".` };
  const n = typeof seconds === 'string' && /^\d{1,10}$/.test(seconds) ? Number(seconds) : seconds;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < minSeconds || n > MAX_EXPIRY_SECONDS)
    return {
      ok: false,
      message: `${param}.seconds must be a whole number of seconds from ${minSeconds} to ${MAX_EXPIRY_SECONDS}.`,
    };
  return { ok: true, seconds: n };
}
