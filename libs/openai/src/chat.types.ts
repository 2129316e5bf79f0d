/** OpenAI chat-completions wire shapes, as clients send and expect them. */

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant';

export interface TextContentPart {
  type: 'text';
  text: string;
}

export interface ImageContentPart {
  type: 'image_url';
  image_url: { url: string; detail?: string };
}

export type ContentPart = TextContentPart | ImageContentPart;

export interface ChatMessage {
  role: ChatRole;
  content: string | ContentPart[];
  name?: string;
}

export interface StreamOptions {
  include_usage?: boolean | null;
}

/**
 * The request body. Every optional field may also arrive as `null`, which
 * means the same as leaving it out.
 */
export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  min_p?: number | null;
  repetition_penalty?: number | null;
  repeat_penalty?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  seed?: number | null;
  stop?: string | string[] | null;
  stream?: boolean | null;
  stream_options?: StreamOptions | null;
  n?: number | null;
  user?: string | null;
}

export type FinishReason = 'stop' | 'length';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  system_fingerprint: string | null;
  choices: Array<{
    index: number;
    message: { role: 'assistant'; content: string };
    logprobs: null;
    finish_reason: FinishReason;
  }>;
  usage: Usage;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  system_fingerprint: string | null;
  choices: Array<{
    index: number;
    delta: { role?: 'assistant'; content?: string };
    logprobs: null;
    finish_reason: FinishReason | null;
  }>;
  usage?: Usage | null;
}
