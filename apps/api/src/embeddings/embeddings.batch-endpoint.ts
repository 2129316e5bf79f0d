import type { BatchEndpoint } from '../batches/batch-endpoints.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { EMBEDDING_ID_PREFIX } from './embeddings.service.js';
import { toEmbeddingList } from './embeddings-response.mapper.js';
import { assertServesEmbeddings, parseEmbeddingBody, toEmbedJob } from './embedding-request.parser.js';

/**
 * `/v1/embeddings` as a batch endpoint. An output line is written from the worker's result alone,
 * long after the body was read, so what needs the body there is refused up front rather than ignored.
 */
export const embeddingsBatchEndpoint: BatchEndpoint = {
  idPrefix: EMBEDDING_ID_PREFIX,
  parse(body) {
    const dto = parseEmbeddingBody(body);
    return {
      model: dto.model,
      check(deployment) {
        assertServesEmbeddings(deployment);
        if (dto.encoding_format === 'base64') throw OpenAiHttpError.unsupported('encoding_format "base64" in a batch line', 'encoding_format');
        if (dto.dimensions != null) throw OpenAiHttpError.unsupported('dimensions in a batch line', 'dimensions');
      },
      toJob: (requestId, deployment) => toEmbedJob(dto, requestId, deployment.id),
    };
  },
  toResponse: (who, reply) => toEmbeddingList(who.model, reply, 'float'),
};
