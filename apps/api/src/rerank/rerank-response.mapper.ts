import type { RerankResponse } from '@conveyor/openai';
import type { ReplyResult } from '@conveyor/queue';
import { fromBase64Float32 } from '../generation/float32-base64.js';

/** What of the request shapes its reply: how many results it keeps, and the documents to echo. */
export interface RerankShape {
  topN?: number | null;
  /** The request's documents, where it asked for them back. */
  documents?: readonly string[];
}

/**
 * A finished rerank reply in the Jina/Cohere shape: the worker sends each document's score as a vector
 * of one value (the embeddings reply's events); the results go best first, ties in document order.
 */
export function toRerankResponse(
  id: string,
  model: string,
  reply: ReplyResult,
  shape: RerankShape = {},
): RerankResponse {
  const scored = (reply.embeddings ?? []).map((vector, index) => ({ index, score: fromBase64Float32(vector)[0] ?? 0 }));
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  const kept = shape.topN ? scored.slice(0, shape.topN) : scored;
  return {
    id,
    object: 'list',
    model,
    results: kept.map(({ index, score }) => ({
      index,
      relevance_score: score,
      ...(shape.documents ? { document: { text: shape.documents[index] ?? '' } } : {}),
    })),
    usage: { prompt_tokens: reply.usage.promptTokens, total_tokens: reply.usage.promptTokens },
  };
}
