import { ScoreRequestDto } from '@conveyor/protocol';
import type { SurfaceDialect } from '../dialects/dialect.js';
import { OPENAI_BATCH_RESULTS } from '../dialects/openai-batch.dialect.js';
import { OPENAI } from '../dialects/openai.dialect.js';
import { parseRequest } from '../generation/parse-request.js';
import { toScoreResponse } from './score-response.mapper.js';

/**
 * Scoring text pairs (`/v1/score`, batch lines), vLLM's score API for cross-encoders, with OpenAI's
 * errors. It runs on a rerank deployment as a rerank does: one job, each pair's score a vector of one value.
 */
export const openAiScore: SurfaceDialect = {
  ...OPENAI,
  name: 'openai-score',
  idPrefix: 'score-',
  route: '/v1/score',
  operation: 'score',
  parse(body) {
    const dto = parseRequest(ScoreRequestDto, body);
    return {
      model: dto.model,
      check: (deployment) => dto.check(deployment),
      toJob: (requestId, deployment) => dto.toJob(requestId, deployment),
    };
  },
  toResponse: (who, reply) => toScoreResponse(who.id, who.model, who.created, reply),
  batchResults: OPENAI_BATCH_RESULTS,
};
