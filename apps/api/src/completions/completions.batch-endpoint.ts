import type { BatchEndpoint } from '../batches/batch-endpoints.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { parseCompletionBody } from './completion-body.parser.js';
import { assertCompletionSupported } from './completion-capabilities.js';
import { toCompletionJob } from './completion-request.mapper.js';
import { toCompletion } from './completion-response.mapper.js';
import { TEXT_COMPLETION_ID_PREFIX } from './completions.service.js';

/** Batch lines over `/v1/completions`: the synchronous route's checks, job and response body. */
export const completionsBatchEndpoint: BatchEndpoint = {
  idPrefix: TEXT_COMPLETION_ID_PREFIX,
  parse(body) {
    const dto = parseCompletionBody(body);
    return {
      model: dto.model,
      check: (deployment) => {
        assertCompletionSupported(dto, deployment);
        // A line's response is built from the worker's result alone, which does not carry the prompt back.
        if (dto.echo === true) throw OpenAiHttpError.unsupported('echo in a batch line', 'echo');
      },
      toJob: (requestId, deployment) => toCompletionJob(dto, requestId, deployment),
    };
  },
  toResponse: (who, reply) => toCompletion(who, reply),
};
