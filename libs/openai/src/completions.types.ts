/** OpenAI legacy completions (`POST /v1/completions`) wire shapes. */
import type { StreamOptions, Usage } from './chat.types.js';

/**
 * The request body. Every optional field may also arrive as `null`, which
 * means the same as leaving it out. Token-id prompts are part of OpenAI's
 * contract but refused here.
 */
export interface CompletionRequest {
  model: string;
  prompt: string | string[] | number[] | number[][];
  max_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  n?: number | null;
  stream?: boolean | null;
  stream_options?: StreamOptions | null;
  /** How many alternatives to report per generated token (0-5). */
  logprobs?: number | null;
  echo?: boolean | null;
  stop?: string | string[] | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  best_of?: number | null;
  logit_bias?: Record<string, number> | null;
  seed?: number | null;
  suffix?: string | null;
  user?: string | null;
  top_k?: number | null;
  min_p?: number | null;
  repetition_penalty?: number | null;
  repeat_penalty?: number | null;
  ignore_eos?: boolean | null;
  min_tokens?: number | null;
}

export type CompletionFinishReason = 'stop' | 'length';

/** Legacy log-probabilities: parallel arrays, one entry per token of the choice. */
export interface CompletionLogprobs {
  tokens: string[];
  token_logprobs: number[];
  /** Each token's most likely alternatives, token text → log-probability. */
  top_logprobs: Array<Record<string, number>>;
  /** Where each token starts in the choice's text, in characters. */
  text_offset: number[];
}

export interface CompletionChoice {
  text: string;
  index: number;
  logprobs: CompletionLogprobs | null;
  finish_reason: CompletionFinishReason;
}

export interface Completion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  system_fingerprint: string | null;
  choices: CompletionChoice[];
  usage: Usage;
}

/** A streamed piece: same object type as the whole reply; `finish_reason` is null until a choice's last chunk. */
export interface CompletionChunk {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  system_fingerprint: string | null;
  choices: Array<Omit<CompletionChoice, 'finish_reason'> & { finish_reason: CompletionFinishReason | null }>;
  usage?: Usage | null;
}
