/**
 * `POST /v1/rerank`: the Jina/Cohere shape llama.cpp's server and vLLM serve. Documents are strings;
 * results come best first, `top_n` of them, each with its document where `return_documents` asks.
 */
export interface RerankResponse {
  id: string;
  object: 'list';
  model: string;
  results: RerankResult[];
  usage: RerankUsage;
}

export interface RerankResult {
  /** The document's position in the request. */
  index: number;
  /** The model's probability that the document answers the query, 0 to 1. */
  relevance_score: number;
  document?: { text: string };
}

export interface RerankUsage {
  prompt_tokens: number;
  total_tokens: number;
}
