import type { DeploymentConfig } from '@conveyor/config';
import type { QueuedJobData, ReplyResult } from '@conveyor/queue';
import { assertSupported } from '../chat/chat-capabilities.js';
import { parseChatBody } from '../chat/chat-body.parser.js';
import { toChatJob } from '../chat/chat-request.mapper.js';
import { toChatCompletion, type ReplyIdentity } from '../chat/chat-response.mapper.js';
import { completionsBatchEndpoint } from '../completions/completions.batch-endpoint.js';
import { embeddingsBatchEndpoint } from '../embeddings/embeddings.batch-endpoint.js';

/** A batch line's body once it has passed every check of its synchronous route's body validation. */
export interface ParsedBatchBody {
  model: string;
  /** The checks that need the deployment (what it serves); throws OpenAiHttpError naming the field. */
  check(deployment: DeploymentConfig): void;
  toJob(requestId: string, deployment: DeploymentConfig): QueuedJobData;
}

/** What a batch needs of the route its lines go to. */
export interface BatchEndpoint {
  /** Validates a body as the synchronous route does; throws OpenAiHttpError naming the field. */
  parse(body: unknown): ParsedBatchBody;
  /** Prefix of the response id, as the synchronous route makes it. */
  idPrefix: string;
  /** The response body of a line that finished. */
  toResponse(who: ReplyIdentity, reply: ReplyResult): unknown;
}

const chatEndpoint: BatchEndpoint = {
  idPrefix: 'chatcmpl-',
  parse(body) {
    const dto = parseChatBody(body);
    return {
      model: dto.model,
      check: (deployment) => assertSupported(dto, deployment),
      toJob: (requestId, deployment) => toChatJob(dto, requestId, deployment.id, deployment.defaults),
    };
  },
  toResponse: toChatCompletion,
};

/** The routes a batch may run, by the `endpoint` (and each line's `url`) that names them. */
export const BATCH_ENDPOINTS: Readonly<Record<string, BatchEndpoint>> = {
  '/v1/chat/completions': chatEndpoint,
  '/v1/completions': completionsBatchEndpoint,
  '/v1/embeddings': embeddingsBatchEndpoint,
};

export const BATCH_ENDPOINT_URLS = Object.keys(BATCH_ENDPOINTS);
