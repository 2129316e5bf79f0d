import type { EmbeddingEncodingFormat, EmbeddingList } from '@conveyor/openai';
import type { ReplyResult } from '@conveyor/queue';

/** The floats of a vector as workers send it (little-endian float32, base64). */
export function fromBase64Float32(vector: string): number[] {
  const bytes = Buffer.from(vector, 'base64');
  const values = new Array<number>(bytes.length >> 2);
  // Nine significant digits print every float32 exactly, in about half the characters of a double.
  for (let i = 0; i < values.length; i++) values[i] = Number(bytes.readFloatLE(i * 4).toPrecision(9));
  return values;
}

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
