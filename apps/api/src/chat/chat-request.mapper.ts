import type { SamplingDefaults } from '@conveyor/config';
import type { ChatJobData, ChatTurn, Sampling } from '@conveyor/queue';
import type { ChatCompletionRequestDto, ChatMessageDto } from '@conveyor/validation';

/** OpenAI's default temperature; a request that omits it samples, as OpenAI's API does. */
export const DEFAULT_TEMPERATURE = 1;

const given = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

function toTurn(m: ChatMessageDto): ChatTurn {
  const content = typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n');
  // "developer" is OpenAI's newer name for the system role.
  return { role: m.role === 'developer' ? 'system' : m.role, content };
}

/** The request's sampling; a field it leaves unset takes the deployment's preset, if any. */
export function toSampling(dto: ChatCompletionRequestDto, preset: SamplingDefaults = {}): Sampling {
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
    sampling: toSampling(dto, preset),
    maxTokens: given(dto.max_completion_tokens) ?? given(dto.max_tokens) ?? preset.max_tokens,
    stop: toStopList(dto.stop),
    enqueuedAt: now,
  };
}
