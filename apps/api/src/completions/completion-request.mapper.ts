import type { DeploymentConfig, SamplingDefaults } from '@conveyor/config';
import type { ChatJobData } from '@conveyor/queue';
import type { CompletionRequestDto } from '@conveyor/validation';
import { toSampling, toStopList } from '../chat/chat-request.mapper.js';

/** OpenAI's default for legacy completions, used when neither the request nor the deployment sets one. */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;

const given = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

export const promptsOf = (dto: Pick<CompletionRequestDto, 'prompt'>): string[] => (typeof dto.prompt === 'string' ? [dto.prompt] : [...dto.prompt]);

export const choicesPerPrompt = (dto: Pick<CompletionRequestDto, 'n'>): number => given(dto.n) ?? 1;

export const completionMaxTokens = (dto: Pick<CompletionRequestDto, 'max_tokens'>, preset: SamplingDefaults = {}): number =>
  given(dto.max_tokens) ?? preset.max_tokens ?? DEFAULT_COMPLETION_MAX_TOKENS;

/** A validated legacy request → the queue's job: raw prompts instead of chat turns, so no template is applied. */
export function toCompletionJob(dto: CompletionRequestDto, requestId: string, deployment: DeploymentConfig, now = Date.now()): ChatJobData {
  return {
    requestId,
    deployment: deployment.id,
    messages: [],
    prompts: promptsOf(dto),
    sampling: toSampling(dto, deployment.defaults),
    maxTokens: completionMaxTokens(dto, deployment.defaults),
    stop: toStopList(dto.stop),
    n: choicesPerPrompt(dto),
    logprobs: given(dto.logprobs),
    enqueuedAt: now,
  };
}
