/** OpenAI chat-completions wire shapes, as clients send and expect them. */
import type { ServedTier } from './service-tiers.types.js';

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface TextContentPart {
  type: 'text';
  text: string;
}

export interface ImageContentPart {
  type: 'image_url';
  image_url: { url: string; detail?: string };
}

export type ContentPart = TextContentPart | ImageContentPart;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: ChatRole;
  /** May be null on an assistant message that only calls tools. */
  content: string | ContentPart[] | null;
  name?: string;
  /** Assistant messages: the calls the model made. */
  tool_calls?: ToolCall[];
  /** Tool messages: the call this message answers. */
  tool_call_id?: string;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: {
        name: string;
        description?: string;
        schema?: Record<string, unknown> | boolean;
        strict?: boolean | null;
      };
    };

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
  tools?: FunctionTool[] | null;
  tool_choice?: ToolChoice | null;
  parallel_tool_calls?: boolean | null;
  response_format?: ResponseFormat | null;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  logit_bias?: Record<string, number> | null;
  ignore_eos?: boolean | null;
  min_tokens?: number | null;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls';

export interface TopLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
}

export interface TokenLogprob extends TopLogprob {
  top_logprobs: TopLogprob[];
}

export interface ChoiceLogprobs {
  content: TokenLogprob[] | null;
  refusal: null;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  /** The thought segment, when the deployment parses reasoning out of replies. */
  reasoning_content?: string | null;
  tool_calls?: ToolCall[];
  refusal: null;
}

export interface ToolCallChunk {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments: string };
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** As OpenAI reports prompt caching: prompt tokens that were reused rather than computed. */
  prompt_tokens_details?: { cached_tokens: number };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  /** The service tier the request was served at. */
  service_tier: ServedTier;
  system_fingerprint: string | null;
  choices: Array<{
    index: number;
    message: AssistantMessage;
    logprobs: ChoiceLogprobs | null;
    finish_reason: FinishReason;
  }>;
  usage: Usage;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  service_tier: ServedTier;
  system_fingerprint: string | null;
  choices: Array<{
    index: number;
    delta: { role?: 'assistant'; content?: string | null; reasoning_content?: string; tool_calls?: ToolCallChunk[] };
    logprobs: ChoiceLogprobs | null;
    finish_reason: FinishReason | null;
  }>;
  usage?: Usage | null;
}
