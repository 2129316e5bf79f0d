import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { toMessagesError } from './anthropic.dialect.js';

describe('toMessagesError', () => {
  it.each<[OpenAiHttpError, number, string]>([
    [OpenAiHttpError.invalidRequest('bad', 'max_tokens'), 400, 'invalid_request_error'],
    [new OpenAiHttpError(401, 'authentication_error', 'no'), 401, 'authentication_error'],
    [OpenAiHttpError.modelNotFound('x'), 404, 'not_found_error'],
    [new OpenAiHttpError(413, 'invalid_request_error', 'big'), 413, 'request_too_large'],
    [
      new OpenAiHttpError(429, 'rate_limit_error', 'slow down', null, ErrorCode.rateLimitExceeded),
      429,
      'rate_limit_error',
    ],
    [new OpenAiHttpError(429, 'rate_limit_error', 'full', null, ErrorCode.queueFull), 529, 'overloaded_error'],
    [OpenAiHttpError.unavailable('later'), 529, 'overloaded_error'],
    [OpenAiHttpError.timeout(5), 504, 'timeout_error'],
    [OpenAiHttpError.serverError('boom', ErrorCode.generationFailed), 500, 'api_error'],
  ])('%s → %d %s', (error, status, type) => {
    const shaped = toMessagesError(error);
    expect(shaped.status).toBe(status);
    expect(shaped.body).toEqual({ type: 'error', error: { type, message: expect.any(String) } });
  });

  it('names the field at fault in the message, and keeps Retry-After', () => {
    expect(toMessagesError(OpenAiHttpError.invalidRequest('must be set', 'max_tokens')).body.error.message).toBe(
      'max_tokens: must be set',
    );
    expect(toMessagesError(OpenAiHttpError.unavailable('later')).headers['retry-after']).toBe('1');
  });
});
