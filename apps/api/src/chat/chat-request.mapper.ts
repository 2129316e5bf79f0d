import type { SamplingDefaults } from '@conveyor/config';
import type { ChatJobData, ChatTurn, OutputFormat, Sampling, ToolChoice, ToolSpec } from '@conveyor/queue';
import type { ChatCompletionRequestDto, ChatMessageDto } from '@conveyor/validation';

/** OpenAI's default temperature; a request that omits it samples, as OpenAI's API does. */
export const DEFAULT_TEMPERATURE = 1;

const given = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

function toTurn(m: ChatMessageDto): ChatTurn {
  const content = typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('\n');
  // "developer" is OpenAI's newer name for the system role.
  const turn: ChatTurn = { role: m.role === 'developer' ? 'system' : m.role, content };
  if (m.role === 'assistant' && m.tool_calls?.length) turn.toolCalls = m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
  if (m.role === 'tool') turn.toolCallId = m.tool_call_id as string;
  return turn;
}

function toTools(dto: ChatCompletionRequestDto): { tools?: ToolSpec[]; toolChoice?: ToolChoice } {
  const choice = given(dto.tool_choice);
  // With "none", the model is not told about the tools at all, so it cannot start a call.
  if (!dto.tools?.length || choice === 'none') return {};
  const tools = dto.tools.map((t): ToolSpec => ({
    name: t.function.name,
    ...(t.function.description ? { description: t.function.description } : {}),
    ...(t.function.parameters ? { parameters: t.function.parameters } : {}),
  }));
  return { tools, toolChoice: typeof choice === 'object' ? { name: choice.function.name } : (choice ?? 'auto') };
}

function toOutputFormat(dto: ChatCompletionRequestDto): OutputFormat | undefined {
  const format = given(dto.response_format);
  if (format?.type === 'json_object') return { type: 'json_object' };
  if (format?.type === 'json_schema' && format.json_schema) {
    const schema = given(format.json_schema.schema);
    return schema === undefined ? { type: 'json_object' } : { type: 'json_schema', name: format.json_schema.name, schema };
  }
  return undefined;
}

/** The sampling fields chat and legacy completion bodies share. */
export type SamplingFields = Pick<
  ChatCompletionRequestDto,
  'temperature' | 'top_p' | 'top_k' | 'min_p' | 'repetition_penalty' | 'repeat_penalty' | 'presence_penalty' | 'frequency_penalty' | 'seed' | 'ignore_eos' | 'min_tokens' | 'logit_bias'
>;

/** The request's sampling; a field it leaves unset takes the deployment's preset, if any. */
export function toSampling(dto: SamplingFields, preset: SamplingDefaults = {}): Sampling {
  return {
    temperature: given(dto.temperature) ?? preset.temperature ?? DEFAULT_TEMPERATURE,
    topP: given(dto.top_p) ?? preset.top_p,
    topK: given(dto.top_k) ?? preset.top_k,
    minP: given(dto.min_p) ?? preset.min_p,
    // Two names for one knob: GPU engines say repetition_penalty, desktop apps repeat_penalty.
    repeatPenalty: given(dto.repetition_penalty) ?? given(dto.repeat_penalty) ?? preset.repetition_penalty,
    presencePenalty: given(dto.presence_penalty) ?? preset.presence_penalty,
    frequencyPenalty: given(dto.frequency_penalty) ?? preset.frequency_penalty,
    seed: given(dto.seed),
    ignoreEos: given(dto.ignore_eos),
    minTokens: given(dto.min_tokens) || undefined,
    logitBias: dto.logit_bias && Object.keys(dto.logit_bias).length ? { ...dto.logit_bias } : undefined,
  };
}

export function toStopList(stop: string | string[] | null | undefined): string[] {
  if (stop === null || stop === undefined) return [];
  return typeof stop === 'string' ? [stop] : [...stop];
}

/** A validated request → the queue's job payload. Fields left unset take the preset or stay unset. */
export function toChatJob(
  dto: ChatCompletionRequestDto,
  requestId: string,
  deployment: string,
  preset: SamplingDefaults = {},
  now = Date.now(),
): ChatJobData {
  return {
    requestId,
    deployment,
    messages: dto.messages.map(toTurn),
    ...toTools(dto),
    responseFormat: toOutputFormat(dto),
    sampling: toSampling(dto, preset),
    maxTokens: given(dto.max_completion_tokens) ?? given(dto.max_tokens) ?? preset.max_tokens,
    stop: toStopList(dto.stop),
    n: given(dto.n) ?? undefined,
    logprobs: dto.logprobs === true ? (given(dto.top_logprobs) ?? 0) : undefined,
    enqueuedAt: now,
  };
}
