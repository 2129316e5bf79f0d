import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import type { GenerationJobData } from '@conveyor/queue';
import { ChatCompletionRequestDto } from './chat-completion-request.dto.js';
import { checkGeneration } from './checked-generation.js';
import type { GenerationBody } from './generation-request.js';
import { MessagesRequestDto } from './messages-request.dto.js';
import { ResponseRequestDto } from './response-request.dto.js';
import { validateDto } from './validate-dto.js';
import { deploymentTraits, IMAGE_LIMITS } from '../../../test/support/request-bodies.js';

const deployment = deploymentTraits({
  defaults: { temperature: 0.1, top_k: 50, repetition_penalty: 1.05, presence_penalty: 0.5 },
});

/** What each body sets: the rest of the knobs come from the preset, or stay unset. */
const KNOBS = { top_p: 0.9, repeat_penalty: 1.3, frequency_penalty: -1, seed: 7 };

/** A body that becomes a generation job, as the routes use it: checked, then mapped. */
function jobOf(cls: new () => GenerationBody, body: Record<string, unknown>): GenerationJobData {
  const result = validateDto(cls, { model: 'd', ...KNOBS, ...body });
  if (!result.ok) throw new Error(result.problem.message);
  return checkGeneration(result.value, deployment, IMAGE_LIMITS).toJob('r');
}

describe("every generating body's sampling", () => {
  it.each([
    ['chat', ChatCompletionRequestDto, { messages: [{ role: 'user', content: 'Hi' }] }],
    ['messages', MessagesRequestDto, { max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }],
    ['responses', ResponseRequestDto, { input: 'Hi' }],
  ] as const)("%s: the request's knobs, the preset's where it leaves one unset", (_name, cls, body) => {
    expect(jobOf(cls, body).sampling).toMatchObject({
      temperature: 0.1,
      topP: 0.9,
      topK: 50,
      minP: undefined,
      repeatPenalty: 1.3,
      presencePenalty: 0.5,
      frequencyPenalty: -1,
      seed: 7,
    });
  });
});
