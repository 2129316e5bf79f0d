import { describe, it, expect } from '@jest/globals';
import type { ReplyResult } from '@conveyor/queue';
import { fromBase64Float32 } from '../generation/float32-base64.js';
import { dimensionsOf, toEmbeddingList } from './embeddings-response.mapper.js';

/** How a worker encodes a vector: little-endian float32 bytes, base64. */
function encode(values: number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes.toString('base64');
}

const reply = (embeddings: string[]): ReplyResult => ({
  choices: [],
  usage: { promptTokens: 7, completionTokens: 0 },
  embeddings,
});

describe('embeddings response mapper', () => {
  it('decodes floats that are exactly the float32 values sent, in few digits', () => {
    const sent = [0.1, -1 / 3, 1e-8, 123456.789, 0, -0.5];
    const floats = fromBase64Float32(encode(sent));
    expect(Array.from(Float32Array.from(floats))).toEqual(Array.from(Float32Array.from(sent)));
    expect(JSON.stringify(floats).length).toBeLessThan(JSON.stringify(Array.from(Float32Array.from(sent))).length);
  });

  it('maps a reply to an OpenAI list, as floats or passing base64 through', () => {
    const vectors = [encode([1, 0]), encode([0, -1])];
    expect(toEmbeddingList('conveyor-embed', reply(vectors), 'float')).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [1, 0] },
        { object: 'embedding', index: 1, embedding: [0, -1] },
      ],
      model: 'conveyor-embed',
      usage: { prompt_tokens: 7, total_tokens: 7 },
    });
    expect(toEmbeddingList('m', reply(vectors), 'base64').data.map((d) => d.embedding)).toEqual(vectors);
  });

  it('tells the width of a reply from its first vector', () => {
    expect(dimensionsOf(reply([encode([1, 2, 3])]))).toBe(3);
    expect(dimensionsOf(reply([]))).toBeNull();
  });
});
