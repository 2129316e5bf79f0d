import 'reflect-metadata';
import { describe, it, expect } from '@jest/globals';
import { EmbeddingRequestDto, MAX_EMBEDDING_INPUTS, embeddingInputs } from './embedding-request.dto.js';
import { validateDto } from './validate-dto.js';

const body = (input: unknown, extra: Record<string, unknown> = {}) => ({ model: 'conveyor-embed', input, ...extra });

function accepted(value: unknown): EmbeddingRequestDto {
  const result = validateDto(EmbeddingRequestDto, value);
  if (!result.ok)
    throw new Error(`expected ${JSON.stringify(value).slice(0, 200)} to be accepted: ${result.problem.message}`);
  return result.value;
}

function problemOf(value: unknown) {
  const result = validateDto(EmbeddingRequestDto, value);
  if (result.ok) throw new Error(`expected ${JSON.stringify(value).slice(0, 200)} to be rejected`);
  return result.problem;
}

describe('EmbeddingRequestDto', () => {
  it('accepts the four input shapes and lists one input per vector to return', () => {
    expect(embeddingInputs(accepted(body('hello')))).toEqual(['hello']);
    expect(embeddingInputs(accepted(body(['a', 'b'])))).toEqual(['a', 'b']);
    expect(embeddingInputs(accepted(body([1, 2, 3])))).toEqual([[1, 2, 3]]);
    expect(embeddingInputs(accepted(body([[1, 2], [3]])))).toEqual([[1, 2], [3]]);
  });

  it('treats null in optional fields as absent and accepts both encodings', () => {
    accepted(body('x', { encoding_format: null, dimensions: null, user: null }));
    accepted(body('x', { encoding_format: 'float' }));
    accepted(body('x', { encoding_format: 'base64', dimensions: 128, user: 'u-1' }));
  });

  it.each([
    ['a missing input', undefined, /^input must be a non-empty string/],
    ['null', null, /^input must be a non-empty string/],
    ['an empty string', '', /^input must not be an empty string/],
    ['an empty array', [], /^input must not be an empty array/],
    ['an empty string in a list', ['a', ''], /^input item 1 must not be an empty string/],
    ['an empty token list', [[1], []], /^input item 1 must not be an empty array/],
    ['a mix of strings and token ids', ['a', 1], /^input item 1 must be a string/],
    ['a mix of token lists and strings', [[1], 'a'], /^input item 1 must be an array of token ids/],
    ['a negative token id', [1, -1], /position 1, which is not a token id/],
    ['a fractional token id', [[1.5]], /position 0, which is not a token id/],
    ['an object', { text: 'a' }, /^input must be a non-empty string/],
    ['a lone surrogate', ['\uD800'], /lone UTF-16 surrogate/],
  ])('refuses %s, naming input', (_, input, message) => {
    const problem = problemOf(body(input));
    expect(problem.param).toBe('input');
    expect(problem.message).toMatch(message);
  });

  it(`refuses more than ${MAX_EMBEDDING_INPUTS} inputs`, () => {
    accepted(body(Array.from({ length: MAX_EMBEDDING_INPUTS }, () => 'x')));
    const problem = problemOf(body(Array.from({ length: MAX_EMBEDDING_INPUTS + 1 }, () => 'x')));
    expect(problem).toEqual({
      param: 'input',
      message: `input has ${MAX_EMBEDDING_INPUTS + 1} items; at most ${MAX_EMBEDDING_INPUTS} are allowed`,
    });
  });

  it('refuses a bad model, encoding_format or dimensions, naming the field', () => {
    expect(problemOf({ input: 'x' }).param).toBe('model');
    expect(problemOf(body('x', { encoding_format: 'int8' }))).toEqual({
      param: 'encoding_format',
      message: 'encoding_format must be "float" or "base64"',
    });
    expect(problemOf(body('x', { dimensions: 0 })).param).toBe('dimensions');
    expect(problemOf(body('x', { dimensions: 'all' })).param).toBe('dimensions');
  });
});
