/** OpenAI legacy completions (`POST /v1/completions`) wire shapes. */
import type { Usage } from './chat.types.js';

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
