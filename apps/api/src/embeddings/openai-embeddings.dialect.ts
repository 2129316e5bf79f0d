import { EmbeddingRequestDto, RequestProblem } from '@conveyor/protocol';
import type { SurfaceDialect } from '../dialects/dialect.js';
import { OPENAI_BATCH_RESULTS } from '../dialects/openai-batch.dialect.js';
import { OPENAI } from '../dialects/openai.dialect.js';
import { parseRequest } from '../generation/parse-request.js';
import { toEmbeddingList } from './embeddings-response.mapper.js';

/**
 * OpenAI's embeddings (`/v1/embeddings`, the hosted form, batch lines). A batch line's output is
 * written from the worker's result alone, long after the body was read, so what needs the body there
 * is refused up front rather than ignored.
 */
export const openAiEmbeddings: SurfaceDialect = {
  ...OPENAI,
  name: 'openai-embeddings',
  idPrefix: 'embd-',
  route: '/v1/embeddings',
  operation: 'embeddings',
  parse(body) {
    const dto = parseRequest(EmbeddingRequestDto, body);
    return {
      model: dto.model,
      check(deployment) {
        dto.check(deployment);
        if (dto.encoding_format === 'base64') {
          throw RequestProblem.unsupported('encoding_format "base64" in a batch line', 'encoding_format');
        }
        if (dto.dimensions != null) throw RequestProblem.unsupported('dimensions in a batch line', 'dimensions');
      },
      toJob: (requestId, deployment) => dto.toJob(requestId, deployment),
    };
  },
  toResponse: (who, reply) => toEmbeddingList(who.model, reply, 'float'),
  batchResults: OPENAI_BATCH_RESULTS,
};
