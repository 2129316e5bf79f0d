import 'reflect-metadata';
import { describe, it, expect } from '@jest/globals';
import { CompletionRequestDto, DEFAULT_COMPLETION_MAX_TOKENS } from './completion-request.dto.js';
import type { DeploymentTraits } from './deployment-traits.js';
import { validateDto } from './validate-dto.js';
import { deploymentTraits, IMAGE_LIMITS, jobOf, requestProblem } from '../../../test/support/request-bodies.js';
import { checkGeneration } from './checked-generation.js';

const deployment = (extra: Partial<DeploymentTraits> = {}): DeploymentTraits =>
  deploymentTraits({ id: 'conveyor-tiny', contextSize: 512, ...extra });

const parse = (extra: Record<string, unknown> = {}): CompletionRequestDto => {
  const result = validateDto(CompletionRequestDto, { model: 'conveyor-tiny', prompt: 'Once upon', ...extra });
  if (!result.ok) throw new Error(result.problem.message);
  return result.value;
};

const toCompletionJob = (dto: CompletionRequestDto, requestId: string, d: DeploymentTraits, now?: number) =>
  jobOf(dto, requestId, d, now);

/** The problem a check raises, as [param, code]. */
const refusal = (fn: () => unknown): [string | null, string | null] => {
  const problem = requestProblem(fn);
  return [problem.param, problem.code];
};

describe('CompletionRequestDto.toJob', () => {
  it('sends the raw prompt with no chat turns, and OpenAI legacy defaults', () => {
    const job = toCompletionJob(parse(), 'req-1', deployment(), 1_700_000_000_000);
    expect(job).toMatchObject({
      requestId: 'req-1',
      deployment: 'conveyor-tiny',
      messages: [],
      prompts: ['Once upon'],
      stop: [],
      n: 1,
      enqueuedAt: 1_700_000_000_000,
    });
    expect(job.maxTokens).toBe(DEFAULT_COMPLETION_MAX_TOKENS);
    expect(job.sampling.temperature).toBe(1);
    expect(job.logprobs).toBeUndefined();
  });

  it('keeps a prompt list in order, with n choices each', () => {
    const job = toCompletionJob(parse({ prompt: ['a', 'b'], n: 3 }), 'r', deployment({ parallel: 6 }));
    expect(job.prompts).toEqual(['a', 'b']);
    expect(job.n).toBe(3);
  });

  it('takes max_tokens from the request, else the deployment preset, else 16', () => {
    expect(toCompletionJob(parse({ max_tokens: 5 }), 'r', deployment({ defaults: { max_tokens: 40 } })).maxTokens).toBe(
      5,
    );
    expect(
      toCompletionJob(parse({ max_tokens: null }), 'r', deployment({ defaults: { max_tokens: 40 } })).maxTokens,
    ).toBe(40);
    expect(toCompletionJob(parse({ max_tokens: null }), 'r', deployment()).maxTokens).toBe(16);
  });

  it('maps logprobs (0 included), stop, sampling and the chat extras', () => {
    const job = toCompletionJob(
      parse({
        logprobs: 0,
        stop: '\n',
        temperature: 0,
        top_k: 1,
        repeat_penalty: 1.2,
        ignore_eos: true,
        min_tokens: 2,
        logit_bias: { '5': -100 },
        seed: 9,
      }),
      'r',
      deployment({ defaults: { top_p: 0.9 } }),
    );
    expect(job.logprobs).toBe(0);
    expect(job.stop).toEqual(['\n']);
    expect(job.sampling).toMatchObject({
      temperature: 0,
      topK: 1,
      topP: 0.9,
      repeatPenalty: 1.2,
      ignoreEos: true,
      minTokens: 2,
      logitBias: { '5': -100 },
      seed: 9,
    });
    expect(toCompletionJob(parse({ logprobs: 3, stop: ['x', 'y'] }), 'r', deployment())).toMatchObject({
      logprobs: 3,
      stop: ['x', 'y'],
    });
  });
});

describe('CompletionRequestDto.check', () => {
  const check = (extra: Record<string, unknown>, d = deployment()) =>
    refusal(() => checkGeneration(parse(extra), d, IMAGE_LIMITS));

  it('accepts a plain request, best_of of 1 or n, and an empty suffix', () => {
    expect(() => checkGeneration(parse({ n: 2, best_of: 2, suffix: '' }), deployment(), IMAGE_LIMITS)).not.toThrow();
    expect(() => checkGeneration(parse({ best_of: 1, echo: true }), deployment(), IMAGE_LIMITS)).not.toThrow();
  });

  it('refuses what it cannot honour, naming the field', () => {
    expect(check({ suffix: 'end' })).toEqual(['suffix', 'unsupported_parameter']);
    expect(check({ best_of: 3, n: 2 })).toEqual(['best_of', 'unsupported_parameter']);
    expect(check({ echo: true, logprobs: 0 })).toEqual(['echo', 'unsupported_parameter']);
    expect(check({ max_tokens: 512 })).toEqual(['max_tokens', 'context_length_exceeded']);
    expect(check({ n: 5 })).toEqual(['n', 'invalid_value']);
    // Prompts × n choices all run at once, within the deployment's parallel sequences.
    expect(check({ prompt: ['a', 'b', 'c'], n: 2 })).toEqual(['n', 'invalid_value']);
    expect(check({ prompt: ['a', 'b', 'c', 'd', 'e'] })).toEqual(['prompt', 'invalid_value']);
    expect(() => checkGeneration(parse({ prompt: ['a', 'b'], n: 2 }), deployment(), IMAGE_LIMITS)).not.toThrow();
    expect(check({ min_tokens: 20 })[0]).toBe('min_tokens');
    expect(check({}, deployment({ task: 'embeddings' }))).toEqual(['model', 'model_not_supported']);
  });
});
