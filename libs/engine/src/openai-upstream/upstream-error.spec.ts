import { describe, expect, it } from '@jest/globals';
import { EngineInputError } from '../core/generation-engine.js';
import { upstreamFailure, UpstreamError } from './upstream-error.js';

describe('upstreamFailure', () => {
  it("makes the request's own faults input errors, with the upstream's message, code and param", () => {
    const vllm = upstreamFailure(
      400,
      { error: { message: 'top_k must be -1 or at least 1', type: 'BadRequestError', param: 'top_k', code: 400 } },
      'vLLM',
    );
    expect(vllm).toBeInstanceOf(EngineInputError);
    expect(vllm).toMatchObject({ message: 'top_k must be -1 or at least 1', code: 'invalid_request', param: 'top_k' });
    const llama = upstreamFailure(
      400,
      {
        error: {
          code: 400,
          message: 'request (9000 tokens) exceeds the available context size',
          type: 'exceed_context_size_error',
        },
      },
      'llama-server',
    );
    expect(llama).toMatchObject({ code: 'context_length_exceeded', param: null });
  });

  it('leaves failures a retry may get past, and set-up mistakes, to the queue', () => {
    for (const status of [500, 503, 401, 404, 429]) {
      const failure = upstreamFailure(status, 'busy', 'vLLM');
      expect(failure).toBeInstanceOf(UpstreamError);
      expect(failure.message).toBe(`vLLM answered ${status}: busy`);
    }
  });
});
