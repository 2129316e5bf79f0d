import { OpenAiHttpError } from '../errors/openai-http.error.js';

/** A batch list's `limit` query, as OpenAI's Batches API takes it: 1 to 100, 20 when absent. */
export function parseListLimit(limit: string | undefined): number {
  const n = limit === undefined ? 20 : Number(limit);
  if (!Number.isInteger(n) || n < 1 || n > 100)
    throw OpenAiHttpError.invalidRequest('limit must be an integer from 1 to 100.', 'limit');
  return n;
}
