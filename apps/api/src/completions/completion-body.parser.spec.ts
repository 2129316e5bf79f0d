import 'reflect-metadata';
import { describe, it, expect } from '@jest/globals';
import { requestProblem } from '../../../../test/support/request-bodies.js';
import { parseCompletionBody } from './completion-body.parser.js';

const parse = (extra: Record<string, unknown> = {}) =>
  parseCompletionBody({ model: 'conveyor-tiny', prompt: 'Once upon', ...extra });

/** The problem a body raises, as [param, code]. */
const refusal = (fn: () => unknown): [string | null, string | null] => {
  const problem = requestProblem(fn);
  return [problem.param, problem.code];
};

describe('parseCompletionBody', () => {
  it('accepts null for every optional field', () => {
    const nulls = Object.fromEntries(
      [
        'max_tokens',
        'temperature',
        'top_p',
        'n',
        'stream',
        'stream_options',
        'logprobs',
        'echo',
        'stop',
        'presence_penalty',
        'frequency_penalty',
        'best_of',
        'logit_bias',
        'seed',
        'suffix',
        'user',
        'top_k',
        'min_p',
        'repetition_penalty',
        'repeat_penalty',
        'ignore_eos',
        'min_tokens',
      ].map((k) => [k, null]),
    );
    expect(parse(nulls).prompt).toBe('Once upon');
  });

  it('refuses token-id prompts as unsupported, naming prompt', () => {
    expect(refusal(() => parse({ prompt: [1, 2, 3] }))).toEqual(['prompt', 'unsupported_parameter']);
    expect(refusal(() => parse({ prompt: [[1, 2], [3]] }))).toEqual(['prompt', 'unsupported_parameter']);
  });

  it('refuses malformed prompts and out-of-range values, naming the field', () => {
    for (const prompt of [['a', 1], [], 5, null, undefined, '\uD800'])
      expect(refusal(() => parse({ prompt }))[0]).toBe('prompt');
    expect(refusal(() => parse({ logprobs: 6 }))[0]).toBe('logprobs');
    expect(refusal(() => parse({ logprobs: true }))[0]).toBe('logprobs');
    expect(refusal(() => parse({ stop: [''] }))[0]).toBe('stop');
    expect(refusal(() => parse({ logit_bias: { x: 1 } }))[0]).toBe('logit_bias');
    expect(refusal(() => parse({ echo: 'yes' }))[0]).toBe('echo');
  });
});
