import 'reflect-metadata';
import { describe, it, expect } from '@jest/globals';
import type { DeploymentConfig } from '@conveyor/config';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { parseCompletionBody } from './completion-body.parser.js';
import { assertCompletionSupported } from './completion-capabilities.js';
import { DEFAULT_COMPLETION_MAX_TOKENS, toCompletionJob } from './completion-request.mapper.js';

const deployment = (extra: Partial<DeploymentConfig> = {}): DeploymentConfig => ({
  id: 'conveyor-tiny',
  model: 'tiny',
  pool: 'cpu',
  contextSize: 512,
  parallel: 4,
  threads: 1,
  defaults: {},
  auth: 'private',
  task: 'generate',
  reasoningParser: null,
  ...extra,
});

const parse = (extra: Record<string, unknown> = {}) => parseCompletionBody({ model: 'conveyor-tiny', prompt: 'Once upon', ...extra });

/** The 400 a body or check raises, as [param, code]. */
const refusal = (fn: () => unknown): [string | null, string | null] => {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof OpenAiHttpError)) throw err;
    expect(err.status).toBe(400);
    return [err.param, err.code];
  }
  throw new Error('expected a refusal');
};

describe('toCompletionJob', () => {
  it('sends the raw prompt with no chat turns, and OpenAI legacy defaults', () => {
    const job = toCompletionJob(parse(), 'req-1', deployment(), 1_700_000_000_000);
    expect(job).toMatchObject({ requestId: 'req-1', deployment: 'conveyor-tiny', messages: [], prompts: ['Once upon'], stop: [], n: 1, enqueuedAt: 1_700_000_000_000 });
    expect(job.maxTokens).toBe(DEFAULT_COMPLETION_MAX_TOKENS);
    expect(job.sampling.temperature).toBe(1);
    expect(job.logprobs).toBeUndefined();
  });

  it('keeps a prompt list in order, with n choices each', () => {
    const job = toCompletionJob(parse({ prompt: ['a', 'b'], n: 3 }), 'r', deployment());
    expect(job.prompts).toEqual(['a', 'b']);
    expect(job.n).toBe(3);
  });

  it('takes max_tokens from the request, else the deployment preset, else 16', () => {
    expect(toCompletionJob(parse({ max_tokens: 5 }), 'r', deployment({ defaults: { max_tokens: 40 } })).maxTokens).toBe(5);
    expect(toCompletionJob(parse({ max_tokens: null }), 'r', deployment({ defaults: { max_tokens: 40 } })).maxTokens).toBe(40);
    expect(toCompletionJob(parse({ max_tokens: null }), 'r', deployment()).maxTokens).toBe(16);
  });

  it('maps logprobs (0 included), stop, sampling and the chat extras', () => {
    const job = toCompletionJob(
      parse({ logprobs: 0, stop: '\n', temperature: 0, top_k: 1, repeat_penalty: 1.2, ignore_eos: true, min_tokens: 2, logit_bias: { '5': -100 }, seed: 9 }),
      'r',
      deployment({ defaults: { top_p: 0.9 } }),
    );
    expect(job.logprobs).toBe(0);
    expect(job.stop).toEqual(['\n']);
    expect(job.sampling).toMatchObject({ temperature: 0, topK: 1, topP: 0.9, repeatPenalty: 1.2, ignoreEos: true, minTokens: 2, logitBias: { '5': -100 }, seed: 9 });
    expect(toCompletionJob(parse({ logprobs: 3, stop: ['x', 'y'] }), 'r', deployment())).toMatchObject({ logprobs: 3, stop: ['x', 'y'] });
  });
});

describe('parseCompletionBody', () => {
  it('accepts null for every optional field', () => {
    const nulls = Object.fromEntries(
      ['max_tokens', 'temperature', 'top_p', 'n', 'stream', 'stream_options', 'logprobs', 'echo', 'stop', 'presence_penalty', 'frequency_penalty', 'best_of', 'logit_bias', 'seed', 'suffix', 'user', 'top_k', 'min_p', 'repetition_penalty', 'repeat_penalty', 'ignore_eos', 'min_tokens'].map((k) => [k, null]),
    );
    expect(parse(nulls).prompt).toBe('Once upon');
  });

  it('refuses token-id prompts as unsupported, naming prompt', () => {
    expect(refusal(() => parse({ prompt: [1, 2, 3] }))).toEqual(['prompt', 'unsupported_parameter']);
    expect(refusal(() => parse({ prompt: [[1, 2], [3]] }))).toEqual(['prompt', 'unsupported_parameter']);
  });

  it('refuses malformed prompts and out-of-range values, naming the field', () => {
    for (const prompt of [['a', 1], [], 5, null, undefined, '\uD800']) expect(refusal(() => parse({ prompt }))[0]).toBe('prompt');
    expect(refusal(() => parse({ logprobs: 6 }))[0]).toBe('logprobs');
    expect(refusal(() => parse({ logprobs: true }))[0]).toBe('logprobs');
    expect(refusal(() => parse({ stop: [''] }))[0]).toBe('stop');
    expect(refusal(() => parse({ logit_bias: { x: 1 } }))[0]).toBe('logit_bias');
    expect(refusal(() => parse({ echo: 'yes' }))[0]).toBe('echo');
  });
});

describe('assertCompletionSupported', () => {
  const check = (extra: Record<string, unknown>, d = deployment()) => refusal(() => assertCompletionSupported(parse(extra), d));

  it('accepts a plain request, best_of of 1 or n, and an empty suffix', () => {
    expect(() => assertCompletionSupported(parse({ n: 2, best_of: 2, suffix: '' }), deployment())).not.toThrow();
    expect(() => assertCompletionSupported(parse({ best_of: 1, echo: true }), deployment())).not.toThrow();
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
    expect(() => assertCompletionSupported(parse({ prompt: ['a', 'b'], n: 2 }), deployment())).not.toThrow();
    expect(check({ min_tokens: 20 })[0]).toBe('min_tokens');
    expect(check({}, deployment({ task: 'embeddings' }))).toEqual(['model', 'model_not_supported']);
  });
});
