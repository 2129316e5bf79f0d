import { RequestProblem, RerankRequestDto } from '@conveyor/protocol';
import type { SurfaceDialect } from '../dialects/dialect.js';
import { OPENAI_BATCH_RESULTS } from '../dialects/openai-batch.dialect.js';
import { OPENAI } from '../dialects/openai.dialect.js';
import { parseRequest } from '../generation/parse-request.js';
import { toRerankResponse } from './rerank-response.mapper.js';

/**
 * Reranking (`/v1/rerank`, batch lines), in the Jina/Cohere shape with OpenAI's errors, as llama.cpp's
 * server and vLLM serve it. A batch line's output is written from the worker's result alone, so what
 * needs the body there (`top_n`, `return_documents`) is refused up front rather than ignored.
 */
export const openAiRerank: SurfaceDialect = {
  ...OPENAI,
  name: 'openai-rerank',
  idPrefix: 'rerank-',
  route: '/v1/rerank',
  operation: 'rerank',
  parse(body) {
    const dto = parseRequest(RerankRequestDto, body);
    return {
      model: dto.model,
      check(deployment) {
        dto.check(deployment);
        if (dto.top_n != null) throw RequestProblem.unsupported('top_n in a batch line', 'top_n');
        if (dto.return_documents) {
          throw RequestProblem.unsupported('return_documents in a batch line', 'return_documents');
        }
      },
      toJob: (requestId, deployment) => dto.toJob(requestId, deployment),
    };
  },
  toResponse: (who, reply) => toRerankResponse(who.id, who.model, reply),
  batchResults: OPENAI_BATCH_RESULTS,
};
