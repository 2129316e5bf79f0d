import { describe, expect, it } from '@jest/globals';
import { parseChunk } from './upstream-chunk.js';

describe('parseChunk', () => {
  it('reads text, reasoning, tool call pieces, log-probabilities, the finish reason and the token count', () => {
    const chunk = parseChunk(
      JSON.stringify({
        choices: [
          {
            index: 1,
            delta: {
              content: 'Hi',
              reasoning_content: 'hmm',
              tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{' } }],
            },
            logprobs: {
              content: [
                { token: 'Hi', logprob: -3.4e38, bytes: [72, 105], top_logprobs: [{ token: 'Ho', logprob: -1 }] },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
        timings: { predicted_n: 5 },
      }),
    );
    expect(chunk).toEqual({
      choices: [
        {
          index: 1,
          text: 'Hi',
          reasoning: 'hmm',
          toolCalls: [{ index: 0, id: 'call_1', name: 'f', arguments: '{' }],
          // llama.cpp writes an impossible token's log-probability as the lowest float.
          logprobs: [
            { token: 'Hi', logprob: -9999, bytes: [72, 105], top: [{ token: 'Ho', logprob: -1, bytes: [72, 111] }] },
          ],
          finishReason: 'tool_calls',
          generated: 5,
        },
      ],
      usage: undefined,
      promptTokens: undefined,
    });
  });

  it('reads usage with cached tokens, the prompt progress, legacy log-probabilities, and the end', () => {
    expect(
      parseChunk(
        JSON.stringify({
          choices: [],
          usage: { prompt_tokens: 30, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 16 } },
        }),
      )?.usage,
    ).toEqual({ promptTokens: 30, completionTokens: 4, cachedTokens: 16 });
    expect(parseChunk(JSON.stringify({ choices: [], prompt_progress: { total: 30 } }))?.promptTokens).toBe(30);
    expect(
      parseChunk(
        JSON.stringify({
          choices: [
            {
              index: 0,
              text: 'a',
              logprobs: { tokens: ['a'], token_logprobs: [-0.5], top_logprobs: [{ a: -0.5, b: -2 }] },
            },
          ],
        }),
      )?.choices[0]?.logprobs,
    ).toEqual([
      {
        token: 'a',
        logprob: -0.5,
        bytes: [97],
        top: [
          { token: 'a', logprob: -0.5, bytes: [97] },
          { token: 'b', logprob: -2, bytes: [98] },
        ],
      },
    ]);
    expect(parseChunk('[DONE]')).toBeUndefined();
    expect(parseChunk('{"error":{"code":400,"message":"bad"}}')?.error?.status).toBe(400);
  });
});

describe('parseChunk: the stop string that ended a choice', () => {
  const finished = (choice: object, extra: object = {}) =>
    parseChunk(JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop', ...choice }], ...extra }))
      ?.choices[0]?.stopString;

  it("reads llama.cpp's stopping_word (when it stopped at a word), vLLM's stop_reason and SGLang's matched_stop", () => {
    expect(finished({}, { __verbose: { stop_type: 'word', stopping_word: 'END' } })).toBe('END');
    expect(finished({}, { __verbose: { stop_type: 'eos', stopping_word: '' } })).toBeUndefined();
    expect(finished({ stop_reason: 'END' })).toBe('END');
    expect(finished({ matched_stop: 'END' })).toBe('END');
  });

  it('reads none from a stop token id, a null, or an upstream that does not say (OpenAI)', () => {
    expect(finished({ stop_reason: 151645 })).toBeUndefined();
    expect(finished({ matched_stop: 2 })).toBeUndefined();
    expect(finished({ stop_reason: null })).toBeUndefined();
    expect(finished({})).toBeUndefined();
  });
});
