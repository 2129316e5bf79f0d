import { ChatCompletionRequestDto, type ImageLimits } from '@conveyor/protocol';
import type { BatchEndpoint } from '../generation/batch-endpoint.js';
import { parseRequest } from '../generation/parse-request.js';
import { toChatCompletion } from './chat-response.mapper.js';
import { COMPLETION_ID_PREFIX } from './chat.service.js';

/**
 * Batch lines over `/v1/chat/completions`: the synchronous route's checks (its image limits included),
 * job and response body.
 */
export const chatBatchEndpoint = (images: ImageLimits): BatchEndpoint => ({
  idPrefix: COMPLETION_ID_PREFIX,
  parse(body) {
    const dto = parseRequest(ChatCompletionRequestDto, body);
    return {
      model: dto.model,
      check: (deployment) => dto.check(deployment, images),
      toJob: (requestId, deployment) => dto.toJob(requestId, deployment),
      images: () => dto.decodedImages(),
    };
  },
  toResponse: toChatCompletion,
});
