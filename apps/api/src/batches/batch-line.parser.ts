import type { DeploymentConfig } from '@conveyor/config';
import type { BatchError } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { BATCH_ENDPOINTS, type ParsedBatchBody } from './batch-endpoints.js';

export interface ParsedLine {
  customId: string;
  body: ParsedBatchBody;
  deployment: DeploymentConfig;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * One input line against the batch line contract: `{custom_id, method: "POST", url, body}`
 * with a chat body that every check of the synchronous route accepts.
 */
export function parseBatchLine(
  text: string,
  line: number,
  endpoint: string,
  findDeployment: (model: string) => DeploymentConfig | undefined,
): { ok: true; value: ParsedLine } | { ok: false; error: BatchError } {
  const fail = (message: string, param: string | null, code = 'invalid_request'): { ok: false; error: BatchError } => ({
    ok: false,
    error: { code, message: `Line ${line}: ${message}`, param, line },
  });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return fail('not valid JSON.', null, 'invalid_json_line');
  }
  if (!isObject(raw)) return fail('each line must be a JSON object.', null);
  if (typeof raw.custom_id !== 'string' || !raw.custom_id || raw.custom_id.length > 512) {
    return fail('custom_id must be a non-empty string of at most 512 characters.', 'custom_id');
  }
  if (raw.method !== 'POST') return fail('method must be "POST".', 'method');
  if (raw.url !== endpoint) return fail(`url must be "${endpoint}", the batch's endpoint.`, 'url', 'mismatched_url');
  const route = BATCH_ENDPOINTS[endpoint];
  if (!route) return fail(`the batch's endpoint "${endpoint}" cannot be run.`, 'url');
  try {
    const body = route.parse(raw.body);
    const deployment = findDeployment(body.model);
    if (!deployment) return fail(`the model '${body.model}' does not exist or is not deployed here.`, 'body.model', 'model_not_found');
    body.check(deployment);
    return { ok: true, value: { customId: raw.custom_id, body, deployment } };
  } catch (err) {
    if (err instanceof OpenAiHttpError) {
      const code = err.code ?? 'invalid_request';
      return fail(err.message, err.param ? `body.${err.param}` : 'body', code);
    }
    throw err;
  }
}
