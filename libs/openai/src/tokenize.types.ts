/** vLLM's `POST /tokenize` reply: the prompt's token ids as the model's tokenizer (and chat template) gives them. */
export interface TokenizeResponse {
  tokens: number[];
  count: number;
  /** Tokens of context the deployment gives one request, prompt and reply together. */
  max_model_len: number;
}

/** vLLM's `POST /detokenize` reply. */
export interface DetokenizeResponse {
  prompt: string;
}
