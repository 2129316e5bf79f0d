import { setImmediate as nextTurn } from 'node:timers/promises';
import type { DeploymentConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import type { ImageLimits } from '@conveyor/protocol';
import { isObject } from '@conveyor/structured';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import type { BatchEndpoint } from '../generation/batch-endpoint.js';
import { checkBatchBody } from './batch-line.parser.js';

/** Anthropic's rule for a request's custom_id. */
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
/**
 * The most time checking requests holds the event loop before letting other work run: a batch of
 * 50,000 takes seconds to check, and /health (a liveness probe) must still be answered meanwhile.
 */
const SLICE_MS = 20;

/** A request of a Message Batch, checked. */
export interface MessageBatchRequest {
  custom_id: string;
  params: Record<string, unknown>;
}

/**
 * A Message Batch's request list, checked whole before anything is stored: each custom_id Anthropic's
 * form and used once, each params a body `/v1/messages` takes (its model deployed here). The first
 * problem is a 400 naming the request and field. Checked in slices of at most SLICE_MS, each in its
 * own turn of the event loop.
 */
export async function checkMessageBatchRequests(
  body: unknown,
  maxLines: number,
  endpoint: BatchEndpoint,
  findDeployment: (model: string) => DeploymentConfig | undefined,
  images: ImageLimits,
): Promise<MessageBatchRequest[]> {
  if (!isObject(body) || !Array.isArray(body.requests) || body.requests.length === 0) {
    throw OpenAiHttpError.invalidRequest('requests must be a non-empty array of {custom_id, params}.', 'requests');
  }
  if (body.requests.length > maxLines) {
    throw OpenAiHttpError.invalidRequest(
      `The batch has ${body.requests.length} requests; a batch may have at most ${maxLines}.`,
      'requests',
    );
  }
  const seen = new Set<string>();
  const checked: MessageBatchRequest[] = [];
  let sliceStart = performance.now();
  for (const [i, request] of (body.requests as unknown[]).entries()) {
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
    const at = `requests[${i}]`;
    if (!isObject(request)) throw OpenAiHttpError.invalidRequest('each request must be an object.', at);
    const { custom_id, params } = request;
    if (typeof custom_id !== 'string' || !CUSTOM_ID.test(custom_id)) {
      throw OpenAiHttpError.invalidRequest(
        'custom_id must be 1 to 64 letters, digits, underscores or dashes.',
        `${at}.custom_id`,
      );
    }
    if (seen.has(custom_id)) {
      throw OpenAiHttpError.invalidRequest(
        `custom_id '${custom_id}' is used by more than one request.`,
        `${at}.custom_id`,
        ErrorCode.duplicateCustomId,
      );
    }
    seen.add(custom_id);
    if (!isObject(params)) throw OpenAiHttpError.invalidRequest('params must be a Messages body.', `${at}.params`);
    const result = checkBatchBody(params, endpoint, findDeployment, images);
    if (!result.ok) {
      throw OpenAiHttpError.invalidRequest(
        result.message,
        result.param ? `${at}.params.${result.param}` : `${at}.params`,
        result.code,
      );
    }
    checked.push({ custom_id, params });
  }
  return checked;
}
