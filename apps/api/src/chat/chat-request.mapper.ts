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

export function toSampling(dto: ChatCompletionRequestDto): Sampling {
  return {
    temperature: given(dto.temperature) ?? DEFAULT_TEMPERATURE,
    topP: given(dto.top_p),
    topK: given(dto.top_k),
    minP: given(dto.min_p),
    // Two names for one knob: GPU engines say repetition_penalty, desktop apps repeat_penalty.
    repeatPenalty: given(dto.repetition_penalty) ?? given(dto.repeat_penalty),
    presencePenalty: given(dto.presence_penalty),
    frequencyPenalty: given(dto.frequency_penalty),
    seed: given(dto.seed),
  };
}

export function toStopList(stop: string | string[] | null | undefined): string[] {
  if (stop === null || stop === undefined) return [];
  return typeof stop === 'string' ? [stop] : [...stop];
}

/** A validated request → the queue's job payload. Fields left unset stay unset. */
export function toChatJob(dto: ChatCompletionRequestDto, requestId: string, deployment: string, now = Date.now()): ChatJobData {
  return {
    requestId,
    deployment,
    messages: dto.messages.map(toTurn),
    sampling: toSampling(dto),
    maxTokens: given(dto.max_completion_tokens) ?? given(dto.max_tokens),
    stop: toStopList(dto.stop),
    enqueuedAt: now,
  };
}
