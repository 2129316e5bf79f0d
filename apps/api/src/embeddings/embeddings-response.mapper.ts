import type { EmbeddingEncodingFormat, EmbeddingList } from '@conveyor/openai';
import type { ReplyResult } from '@conveyor/queue';
import { fromBase64Float32 } from '../generation/float32-base64.js';

/** A finished embeddings reply in OpenAI's shape; base64 is passed through as the worker encoded it. */
export function toEmbeddingList(model: string, reply: ReplyResult, encoding: EmbeddingEncodingFormat): EmbeddingList {
  const vectors = reply.embeddings ?? [];
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: encoding === 'base64' ? vector : fromBase64Float32(vector),
    })),
    model,
    usage: { prompt_tokens: reply.usage.promptTokens, total_tokens: reply.usage.promptTokens },
  };
}

/** Width of the vectors of a reply (they all have the model's width), or null when it has none. */
export function dimensionsOf(reply: ReplyResult): number | null {
  const first = reply.embeddings?.[0];
  return first === undefined ? null : Buffer.byteLength(first, 'base64') >> 2;
}
