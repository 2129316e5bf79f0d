import type { ScoreResponse } from '@conveyor/openai';
import type { ReplyResult } from '@conveyor/queue';
import { fromBase64Float32 } from '../generation/float32-base64.js';

/**
 * A finished score reply in vLLM's shape: the worker sends each pair's score as a vector of one value
 * (the embeddings reply's events), kept in the order of the pairs.
 */
export function toScoreResponse(id: string, model: string, created: number, reply: ReplyResult): ScoreResponse {
  return {
    id,
    object: 'list',
    created,
    model,
    data: (reply.embeddings ?? []).map((vector, index) => ({
      index,
      object: 'score',
      score: fromBase64Float32(vector)[0] ?? 0,
    })),
    usage: { prompt_tokens: reply.usage.promptTokens, total_tokens: reply.usage.promptTokens },
  };
}
