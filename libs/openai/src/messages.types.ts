/**
 * Anthropic's Messages API on the wire (`POST /v1/messages`), the part of it this server speaks.
 * Kept beside OpenAI's types: both are formats the API answers in, and neither imports anything.
 */
import type { AnthropicUsageTier } from './service-tiers.types.js';

/** `system`: a system turn inside the conversation, as Anthropic's current clients may send (text only). */
export type MessagesRole = 'user' | 'assistant' | 'system';

export interface TextBlockParam {
  type: 'text';
  text: string;
}

export interface Base64ImageSource {
  type: 'base64';
  media_type: 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';
  data: string;
}

export interface ImageBlockParam {
  type: 'image';
  source: Base64ImageSource | { type: 'url'; url: string };
}

export interface ToolUseBlockParam {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface ToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<TextBlockParam | ImageBlockParam>;
  is_error?: boolean;
}

/** Earlier replies' thinking, which a client sends back as it got it; it is not part of the prompt. */
export interface ThinkingBlockParam {
  type: 'thinking';
  thinking: string;
  signature?: string;
}

export interface RedactedThinkingBlockParam {
  type: 'redacted_thinking';
  data: string;
}

export type ContentBlockParam =
  | TextBlockParam
  | ImageBlockParam
  | ToolUseBlockParam
  | ToolResultBlockParam
  | ThinkingBlockParam
  | RedactedThinkingBlockParam;

export interface MessageParam {
  role: MessagesRole;
  content: string | ContentBlockParam[];
}

export interface MessagesTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export type MessagesToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export type ThinkingConfig = { type: 'enabled'; budget_tokens: number } | { type: 'disabled' };

// The reply.

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

/** `signature`: Anthropic signs its thinking; a local model's is not signed, so it is empty. */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export type ContentBlock = TextBlock | ToolUseBlock | ThinkingBlock;

export type StopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  /** The reply ran to the end of the model's context, before max_tokens. */
  | 'model_context_window_exceeded';

/**
 * `input_tokens`: prompt tokens computed for this request; `cache_read_input_tokens`: those a
 * prompt cache reused instead (Anthropic counts the two apart, so their sum is the prompt).
 */
export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** The tier the request was served at: `priority` for the priority band, `standard` otherwise. */
  service_tier?: AnthropicUsageTier;
}

export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  content: ContentBlock[];
  model: string;
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
}

// Streaming events, each sent as `event: <type>` with its JSON as data.

export type ContentBlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string };

export type MessageStreamEvent =
  | { type: 'message_start'; message: Message }
  | { type: 'content_block_start'; index: number; content_block: ContentBlock }
  | { type: 'content_block_delta'; index: number; delta: ContentBlockDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: StopReason | null; stop_sequence: string | null };
      usage: { output_tokens: number; input_tokens?: number; cache_read_input_tokens?: number | null };
    }
  | { type: 'message_stop' }
  | { type: 'ping' };

export interface MessageTokensCount {
  input_tokens: number;
}

// Errors.

/** Anthropic's error `type`s, each with its HTTP status. */
export type MessagesErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

export interface MessagesErrorBody {
  type: 'error';
  error: { type: MessagesErrorType; message: string };
}
