import type {
  ReasoningItem,
  ResponseObject,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseStatus,
  ResponseTextFormat,
  ResponseUsage,
} from '@conveyor/openai';
import {
  CUSTOM_INPUT,
  encodeReasoning,
  toolsByModelName,
  type OfferedTool,
  type ResponseRequestDto,
} from '@conveyor/protocol';
import type { FinishReason, TokenUsage, ToolCall } from '@conveyor/queue';
import type { ReplyIdentity } from '../contracts/reply-run.js';

export const RESPONSE_ID_PREFIX = 'resp_';

/** What a response object repeats of the request that made it. */
export type ResponseEcho = Pick<
  ResponseObject,
  | 'background'
  | 'instructions'
  | 'max_output_tokens'
  | 'metadata'
  | 'parallel_tool_calls'
  | 'previous_response_id'
  | 'reasoning'
  | 'store'
  | 'temperature'
  | 'text'
  | 'tool_choice'
  | 'tools'
  | 'top_p'
  | 'user'
>;

/** The echo of a request whose body is not at hand (a batch line's response). */
export const DEFAULT_ECHO: ResponseEcho = {
  background: false,
  instructions: null,
  max_output_tokens: null,
  metadata: {},
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  store: false,
  temperature: null,
  text: { format: { type: 'text' } },
  tool_choice: 'auto',
  tools: [],
  top_p: null,
  user: null,
};

function formatOf(dto: ResponseRequestDto): ResponseTextFormat {
  const f = dto.text?.format;
  if (!f || f.type === 'text') return { type: 'text' };
  if (f.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    name: f.name ?? 'output',
    ...(f.schema !== undefined && f.schema !== null ? { schema: f.schema } : {}),
    description: f.description ?? null,
    strict: f.strict ?? null,
  };
}

/** What a stored response repeats of its request (a resumed stream's events repeat it too). */
export const echoFromResponse = (r: ResponseObject): ResponseEcho => ({
  background: r.background,
  instructions: r.instructions,
  max_output_tokens: r.max_output_tokens,
  metadata: r.metadata,
  parallel_tool_calls: r.parallel_tool_calls,
  previous_response_id: r.previous_response_id,
  reasoning: r.reasoning,
  store: r.store,
  temperature: r.temperature,
  text: r.text,
  tool_choice: r.tool_choice,
  tools: r.tools,
  top_p: r.top_p,
  user: r.user,
});

export function echoOf(dto: ResponseRequestDto): ResponseEcho {
  return {
    background: dto.background ?? false,
    instructions: dto.instructions ?? null,
    max_output_tokens: dto.max_output_tokens ?? null,
    metadata: dto.metadata ?? {},
    parallel_tool_calls: dto.parallel_tool_calls ?? true,
    previous_response_id: dto.previous_response_id ?? null,
    reasoning: { effort: dto.reasoning?.effort ?? null, summary: dto.reasoning?.summary ?? null },
    store: dto.store ?? true,
    temperature: dto.temperature ?? null,
    text: { format: formatOf(dto) },
    tool_choice: dto.tool_choice ?? 'auto',
    tools: dto.tools ?? [],
    top_p: dto.top_p ?? null,
    user: dto.user ?? null,
  };
}

/** The ids of a response's output items, the same in its stream, its body and the store. */
export class OutputIds {
  private readonly hex: string;
  constructor(responseId: string) {
    this.hex = responseId.slice(RESPONSE_ID_PREFIX.length).replaceAll('-', '');
  }
  message(n = 0): string {
    return n ? `msg_${this.hex}_${n}` : `msg_${this.hex}`;
  }
  reasoning(): string {
    return `rs_${this.hex}`;
  }
  call(index: number): string {
    return `fc_${this.hex}_${index}`;
  }
  customCall(index: number): string {
    return `ctc_${this.hex}_${index}`;
  }
}

/** How a response's output items are made beyond its echo: whether reasoning carries `encrypted_content`. */
export interface OutputOptions {
  encryptReasoning?: boolean;
}

/** The tools a response offered the model, by the names the model calls them; and the options. */
export class OutputShape {
  readonly tools: Map<string, OfferedTool>;
  constructor(
    readonly ids: OutputIds,
    echo: ResponseEcho,
    readonly options: OutputOptions = {},
  ) {
    this.tools = toolsByModelName(echo.tools);
  }

  /** The id of the call item for the reply's `index`-th call. */
  callId(index: number, name: string): string {
    return this.tools.get(name)?.kind === 'custom' ? this.ids.customCall(index) : this.ids.call(index);
  }

  call(id: string, call: ToolCall, status: 'in_progress' | 'completed'): ResponseOutputItem {
    return callItem(id, call, status, this.tools.get(call.name));
  }

  reasoning(id: string, text: string): ReasoningItem {
    const item = reasoningItem(id, text);
    return this.options.encryptReasoning ? { ...item, encrypted_content: encodeReasoning(text) } : item;
  }
}

export const toResponseUsage = (u: TokenUsage): ResponseUsage => ({
  input_tokens: u.promptTokens,
  input_tokens_details: { cached_tokens: u.cachedTokens ?? 0 },
  output_tokens: u.completionTokens,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: u.promptTokens + u.completionTokens,
});

export const messageItem = (
  id: string,
  text: string,
  status: ResponseOutputMessage['status'],
): ResponseOutputMessage => ({
  type: 'message',
  id,
  role: 'assistant',
  status,
  content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
});

export const reasoningItem = (id: string, text: string): ReasoningItem => ({
  type: 'reasoning',
  id,
  summary: [],
  content: [{ type: 'reasoning_text', text }],
});

/** A custom tool's input from the JSON arguments the model wrote: its one string, or the text as it is. */
export function customInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed === 'object' && parsed !== null && CUSTOM_INPUT in parsed) {
      const input = (parsed as Record<string, unknown>)[CUSTOM_INPUT];
      if (typeof input === 'string') return input;
    }
  } catch {
    // Not JSON: the model wrote the input bare.
  }
  return args;
}

/**
 * A call as its output item, named as the client declared its tool (`tool`, found by the name the
 * model called): a custom tool's call is a `custom_tool_call` with its input, a namespace's function
 * a `function_call` with its own name and `namespace`.
 */
export function callItem(
  id: string,
  call: ToolCall,
  status: 'in_progress' | 'completed',
  tool?: OfferedTool,
): ResponseOutputItem {
  const namespace = tool?.namespace ? { namespace: tool.namespace } : {};
  if (tool?.kind === 'custom') {
    return {
      type: 'custom_tool_call',
      id,
      call_id: call.id,
      name: tool.name,
      ...namespace,
      input: customInput(call.arguments),
      status,
    };
  }
  return {
    type: 'function_call',
    id,
    call_id: call.id,
    name: tool?.name ?? call.name,
    ...namespace,
    arguments: call.arguments,
    status,
  };
}

/** A response not yet finished (queued, running, failed or cancelled): no output. */
export function pendingResponse(who: ReplyIdentity, echo: ResponseEcho, status: ResponseStatus): ResponseObject {
  return {
    id: who.id,
    object: 'response',
    created_at: who.created,
    status,
    error: null,
    incomplete_details: null,
    model: who.model,
    output: [],
    service_tier: who.tier ?? 'default',
    truncation: 'disabled',
    usage: null,
    ...echo,
  };
}

/** A finished response: `incomplete` when its output ran into max_output_tokens, as is its message then. */
export function finishedResponse(
  who: ReplyIdentity,
  echo: ResponseEcho,
  output: ResponseOutputItem[],
  finishReason: FinishReason,
  usage: TokenUsage,
): ResponseObject {
  const incomplete = finishReason === 'length';
  return {
    ...pendingResponse(who, echo, incomplete ? 'incomplete' : 'completed'),
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    output: incomplete
      ? output.map((item) => (item.type === 'message' ? { ...item, status: 'incomplete' as const } : item))
      : output,
    usage: toResponseUsage(usage),
  };
}
