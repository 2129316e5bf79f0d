import { RequestProblem, ResponseRequestDto, type ImageLimits } from '@conveyor/protocol';
import type { BatchEndpoint } from '../generation/batch-endpoint.js';
import { parseRequest } from '../generation/parse-request.js';
import { DEFAULT_ECHO, RESPONSE_ID_PREFIX, toResponseObject } from './response.mapper.js';

/**
 * Batch lines over `/v1/responses`: the synchronous route's checks and job, its response body. A
 * line is not stored, and stands alone: it cannot continue a stored response or run in the background.
 */
export const responsesBatchEndpoint = (images: ImageLimits): BatchEndpoint => ({
  idPrefix: RESPONSE_ID_PREFIX,
  parse(body) {
    const dto = parseRequest(ResponseRequestDto, body);
    if (dto.previous_response_id)
      throw RequestProblem.unsupported('previous_response_id in a batch', 'previous_response_id');
    if (dto.background) throw RequestProblem.unsupported('background in a batch', 'background');
    return {
      model: dto.model,
      check: (deployment) => dto.check(deployment, images),
      toJob: (requestId, deployment) => dto.toJob(requestId, deployment),
      images: () => dto.decodedImages(),
    };
  },
  toResponse: (who, reply) => toResponseObject(who, reply, DEFAULT_ECHO),
});
