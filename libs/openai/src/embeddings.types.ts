/** OpenAI's `POST /v1/embeddings` response. */
export interface EmbeddingList {
  object: 'list';
  data: Embedding[];
  model: string;
  usage: EmbeddingUsage;
}

export interface Embedding {
  object: 'embedding';
  index: number;
  /** Floats, or with `encoding_format: "base64"` their little-endian float32 bytes in base64. */
  embedding: number[] | string;
}

export interface EmbeddingUsage {
  prompt_tokens: number;
  total_tokens: number;
}

export type EmbeddingEncodingFormat = 'float' | 'base64';
