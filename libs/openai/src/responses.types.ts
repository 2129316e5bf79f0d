/** OpenAI Responses API wire shapes (`/v1/responses`), as clients send and expect them. */
import type { ServedTier } from './service-tiers.types.js';

export interface InputTextPart {
  type: 'input_text';
  text: string;
}

export interface InputImagePart {
  type: 'input_image';
  /** A base64 data: URI; URLs are never fetched. */
  image_url?: string | null;
  file_id?: string | null;
  detail?: 'auto' | 'low' | 'high';
}

export interface OutputTextPart {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs?: unknown[];
}

export type InputContentPart = InputTextPart | InputImagePart | OutputTextPart;

/** A message of the conversation; `type` may be left out, as the SDKs' "easy" messages do. */
export interface ResponseInputMessage {
  type?: 'message';
  id?: string;
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | InputContentPart[];
  status?: ResponseItemStatus;
}

export interface FunctionCallItem {
  type: 'function_call';
  id?: string;
  call_id: string;
  /** The function's name as its tool declared it (inside its namespace, for a namespace's function). */
  name: string;
  /** The namespace tool the function belongs to, if any. */
  namespace?: string;
  arguments: string;
  status?: ResponseItemStatus;
}

/** A tool's result: text, or content parts (their text is what the model reads). */
export type ToolOutput = string | Array<InputTextPart | InputImagePart | { type: string; [field: string]: unknown }>;

export interface FunctionCallOutputItem {
  type: 'function_call_output';
  id?: string;
  call_id: string;
  output: ToolOutput;
  status?: ResponseItemStatus;
}

/** A call of a custom (free-form) tool: its input is plain text, not JSON. */
export interface CustomToolCallItem {
  type: 'custom_tool_call';
  id?: string;
  call_id: string;
  name: string;
  namespace?: string;
  input: string;
  status?: ResponseItemStatus;
}

export interface CustomToolCallOutputItem {
  type: 'custom_tool_call_output';
  id?: string;
  call_id: string;
  output: ToolOutput;
  status?: ResponseItemStatus;
}

export interface ReasoningTextPart {
  type: 'reasoning_text';
  text: string;
}

export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  content?: ReasoningTextPart[];
  /** With `include: ["reasoning.encrypted_content"]`: the reasoning, encoded to be sent back as input. */
  encrypted_content?: string | null;
  status?: ResponseItemStatus;
}

/** What `input` may hold: messages, calls the model made, their results, and earlier reasoning (skipped). */
export type ResponseInputItem =
  | ResponseInputMessage
  | FunctionCallItem
  | FunctionCallOutputItem
  | CustomToolCallItem
  | CustomToolCallOutputItem
  | ReasoningItem;

export type ResponseItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface ResponseOutputMessage {
  type: 'message';
  id: string;
  role: 'assistant';
  status: ResponseItemStatus;
  content: OutputTextPart[];
}

export type ResponseOutputItem =
  ResponseOutputMessage | (FunctionCallItem & { id: string }) | (CustomToolCallItem & { id: string }) | ReasoningItem;

export interface ResponseFunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

/** The input a custom tool takes: free text, or text a grammar (Lark or a regex) describes. */
export type CustomToolFormat = { type: 'text' } | { type: 'grammar'; syntax: 'lark' | 'regex'; definition: string };

/** A custom (free-form) tool: the model calls it with plain text rather than JSON arguments. */
export interface ResponseCustomTool {
  type: 'custom';
  name: string;
  description?: string | null;
  format?: CustomToolFormat | null;
}

/** A group of function and custom tools under one name; their calls carry it as `namespace`. */
export interface ResponseNamespaceTool {
  type: 'namespace';
  name: string;
  description?: string | null;
  tools: Array<ResponseFunctionTool | ResponseCustomTool>;
}

/** A tool OpenAI runs itself (web search, file search, code interpreter…), by its type. */
export type HostedToolType =
  | 'web_search'
  | 'web_search_preview'
  | 'file_search'
  | 'code_interpreter'
  | 'image_generation'
  | 'computer_use_preview'
  | 'mcp'
  | 'local_shell'
  | (string & {});

export interface ResponseHostedTool {
  type: HostedToolType;
  [field: string]: unknown;
}

export type ResponseTool = ResponseFunctionTool | ResponseCustomTool | ResponseNamespaceTool | ResponseHostedTool;

export type ResponseToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; name: string; namespace?: string }
  | { type: 'custom'; name: string };

export type ResponseTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      schema?: Record<string, unknown> | boolean;
      description?: string | null;
      strict?: boolean | null;
    };

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled';

export interface ResponseError {
  code: string;
  message: string;
}

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  background: boolean;
  error: ResponseError | null;
  incomplete_details: { reason: 'max_output_tokens' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: ResponseOutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  /** The service tier the request was served at. */
  service_tier: ServedTier;
  store: boolean;
  temperature: number | null;
  text: { format: ResponseTextFormat };
  tool_choice: ResponseToolChoice;
  tools: ResponseTool[];
  top_p: number | null;
  truncation: 'disabled';
  usage: ResponseUsage | null;
  user: string | null;
  metadata: Record<string, string>;
}

export interface ResponseDeleted {
  id: string;
  object: 'response';
  deleted: true;
}

/** An input item as `GET /v1/responses/{id}/input_items` lists it: every one with an id. */
export type ResponseListedItem = ResponseInputItem & { id: string };

/** The streamed events; every one carries `sequence_number`, its place in the stream. */
export type ResponseStreamEvent = { sequence_number: number } & (
  | {
      type:
        'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete' | 'response.failed';
      response: ResponseObject;
    }
  | { type: 'response.output_item.added' | 'response.output_item.done'; output_index: number; item: ResponseOutputItem }
  | {
      type: 'response.content_part.added' | 'response.content_part.done';
      item_id: string;
      output_index: number;
      content_index: number;
      part: OutputTextPart | ReasoningTextPart;
    }
  | {
      type: 'response.output_text.delta';
      item_id: string;
      output_index: number;
      content_index: number;
      delta: string;
      logprobs: unknown[];
    }
  | {
      type: 'response.output_text.done';
      item_id: string;
      output_index: number;
      content_index: number;
      text: string;
      logprobs: unknown[];
    }
  | {
      type: 'response.reasoning_text.delta';
      item_id: string;
      output_index: number;
      content_index: number;
      delta: string;
    }
  | { type: 'response.reasoning_text.done'; item_id: string; output_index: number; content_index: number; text: string }
  | { type: 'response.function_call_arguments.delta'; item_id: string; output_index: number; delta: string }
  | {
      type: 'response.function_call_arguments.done';
      item_id: string;
      output_index: number;
      name: string;
      arguments: string;
    }
  | { type: 'response.custom_tool_call_input.delta'; item_id: string; output_index: number; delta: string }
  | { type: 'response.custom_tool_call_input.done'; item_id: string; output_index: number; input: string }
);
