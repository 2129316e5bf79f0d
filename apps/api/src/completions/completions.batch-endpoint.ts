import { RequestProblem } from '@conveyor/protocol';
import type { BatchEndpoint } from '../generation/batch-endpoint.js';
import { parseCompletionBody } from './completion-body.parser.js';
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
        dto.check(deployment);
        // A line's response is built from the worker's result alone, which does not carry the prompt back.
        if (dto.echo === true) throw RequestProblem.unsupported('echo in a batch line', 'echo');
      },
      toJob: (requestId, deployment) => dto.toJob(requestId, deployment),
    };
  },
  toResponse: (who, reply) => toCompletion(who, reply),
};
