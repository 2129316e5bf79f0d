import type { DeploymentConfig } from '@conveyor/config';
import { ErrorCode, type BatchError } from '@conveyor/openai';
import { RequestProblem, type ImageLimits } from '@conveyor/protocol';
import { isObject } from '@conveyor/structured';
import type { BatchEndpoint, ParsedBatchBody } from '../contracts/batch-endpoint.js';

export interface ParsedLine {
  customId: string;
  body: ParsedBatchBody;
  deployment: DeploymentConfig;
  /** The body as the line sent it: what tells a repeated request from another (see line-keys.ts). */
  sent: unknown;
}

/** A line that passed every check, or why it did not (with its custom_id, when it has a valid one). */
export type LineCheck = { ok: true; value: ParsedLine } | { ok: false; error: BatchError; customId?: string };

/**
 * One input line against the batch line contract: `{custom_id, method: "POST", url, body}`
 * with a chat body that every check of the synchronous route accepts.
 */
export function parseBatchLine(
  text: string,
  line: number,
  url: string,
  endpoint: BatchEndpoint,
  findDeployment: (model: string) => DeploymentConfig | undefined,
  images: ImageLimits,
): LineCheck {
  /** The line's custom_id once it is known to be valid: a later failure still names the request. */
  const named: { customId?: string } = {};
  const fail = (message: string, param: string | null, code: string = ErrorCode.invalidRequest): LineCheck => ({
    ok: false,
    error: { code, message: `Line ${line}: ${message}`, param, line },
    ...named,
  });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return fail('not valid JSON.', null, ErrorCode.invalidJsonLine);
  }
  if (!isObject(raw)) return fail('each line must be a JSON object.', null);
  const customId = validCustomId(raw);
  if (customId === undefined) {
    return fail('custom_id must be a non-empty string of at most 512 characters.', 'custom_id');
  }
  named.customId = customId;
  if (raw.method !== 'POST') return fail('method must be "POST".', 'method');
  if (raw.url !== url) return fail(`url must be "${url}", the batch's endpoint.`, 'url', ErrorCode.mismatchedUrl);
  const checked = checkBatchBody(raw.body, endpoint, findDeployment, images);
  if (!checked.ok) return fail(checked.message, checked.param ? `body.${checked.param}` : 'body', checked.code);
  return {
    ok: true,
    value: { customId, body: checked.body, deployment: checked.deployment, sent: raw.body },
  };
}

/** A line's custom_id, when the line names a valid one. */
export function validCustomId(raw: unknown): string | undefined {
  if (!isObject(raw)) return undefined;
  const { custom_id } = raw;
  return typeof custom_id === 'string' && custom_id && custom_id.length <= 512 ? custom_id : undefined;
}

/** A request body that passed every check of its route against the deployment it names, or why not. */
export type BodyCheck =
  | { ok: true; body: ParsedBatchBody; deployment: DeploymentConfig }
  /** `param`: the field at fault within the body, or null for the body as a whole. */
  | { ok: false; message: string; param: string | null; code: string };

/** One request body of a batch, checked as its synchronous route checks it. */
export function checkBatchBody(
  raw: unknown,
  endpoint: BatchEndpoint,
  findDeployment: (model: string) => DeploymentConfig | undefined,
  images: ImageLimits,
): BodyCheck {
  try {
    const body = endpoint.parse(raw);
    const deployment = findDeployment(body.model);
    if (!deployment) {
      return {
        ok: false,
        message: `the model '${body.model}' does not exist or is not deployed here.`,
        param: 'model',
        code: ErrorCode.modelNotFound,
      };
    }
    body.check(deployment, images);
    return { ok: true, body, deployment };
  } catch (err) {
    if (err instanceof RequestProblem) {
      return { ok: false, message: err.message, param: err.param, code: err.code ?? ErrorCode.invalidRequest };
    }
    throw err;
  }
}
