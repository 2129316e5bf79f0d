import { describe, expect, it } from '@jest/globals';
import type { ImageRef } from '@conveyor/queue';
import { EngineInputError, type GenerateRequest } from '../core/generation-engine.js';
import { chatRequestBody, completionRequestBody, parseChunk, upstreamFailure, UpstreamError } from './openai-wire.js';

const image: ImageRef = { sha256: 'ab'.repeat(32), mime: 'image/png', bytes: 3, width: 1, height: 1 };
const base: GenerateRequest = { messages: [{ role: 'user', content: 'hi' }], sampling: { temperature: 0.5 }, stop: [] };

describe('chatRequestBody', () => {
  it('sends only what the request sets to an OpenAI upstream, and neutral sampling to llama-server', () => {
    const openai = chatRequestBody(base, 'm', 'openai', new Map());
    expect(openai).toEqual({
      model: 'm',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.5,
      messages: [{ role: 'user', content: 'hi' }],
    });
    // llama.cpp's own defaults (top_k 40, top_p 0.95, min_p 0.05) would sample differently from the in-process engine.
    expect(chatRequestBody(base, 'm', 'llama-server', new Map())).toMatchObject({
      top_p: 1,
      top_k: 0,
      min_p: 0,
      repeat_penalty: 1,
      timings_per_token: true,
      return_progress: true,
    });
  });

  it('maps sampling, budget, stops, choices, tools, formats and log-probabilities to their wire names', () => {
    const body = chatRequestBody(
      {
        ...base,
        sampling: {
          temperature: 1,
          topP: 0.9,
          topK: 20,
          minP: 0.1,
          repeatPenalty: 1.1,
          presencePenalty: 0.5,
          frequencyPenalty: 0.25,
          seed: 7,
          ignoreEos: true,
          minTokens: 3,
          logitBias: { '42': -100 },
        },
        maxTokens: 50,
        stop: ['\n\n'],
        n: 2,
        tools: [{ name: 'lookup', parameters: { type: 'object' } }],
        toolChoice: { name: 'lookup' },
        responseFormat: { type: 'json_schema', name: 'out', schema: { type: 'object' } },
        logprobs: 0,
      },
      'm',
      'openai',
      new Map(),
    );
    expect(body).toMatchObject({
      top_p: 0.9,
      top_k: 20,
      min_p: 0.1,
      repeat_penalty: 1.1,
      repetition_penalty: 1.1,
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
      seed: 7,
      ignore_eos: true,
      min_tokens: 3,
      logit_bias: { '42': -100 },
      max_tokens: 50,
      stop: ['\n\n'],
      n: 2,
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      // A named function is called once.
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' } } },
      logprobs: true,
      top_logprobs: 0,
    });
  });

  it('asks for several tool calls as OpenAI defaults to, and for one when parallel_tool_calls is false', () => {
    const tools = { ...base, tools: [{ name: 'lookup' }], toolChoice: 'auto' as const };
    // An OpenAI upstream applies its own default; llama.cpp's server would make one call unless told.
    expect(chatRequestBody(tools, 'm', 'openai', new Map())).not.toHaveProperty('parallel_tool_calls');
    expect(chatRequestBody(tools, 'm', 'llama-server', new Map())).toMatchObject({ parallel_tool_calls: true });
    for (const dialect of ['openai', 'llama-server'] as const) {
      const single = chatRequestBody({ ...tools, parallelToolCalls: false }, 'm', dialect, new Map());
      expect(single).toMatchObject({ parallel_tool_calls: false, tool_choice: 'auto' });
      expect(chatRequestBody({ ...tools, parallelToolCalls: true }, 'm', dialect, new Map())).toMatchObject({
        parallel_tool_calls: true,
      });
    }
    // Without tools there is nothing to call.
    expect(chatRequestBody({ ...base, parallelToolCalls: false }, 'm', 'llama-server', new Map())).not.toHaveProperty(
      'parallel_tool_calls',
    );
  });

  it('continues a reply as a trailing assistant turn, with what was sent taken off the budget', () => {
    const body = chatRequestBody(
      { ...base, maxTokens: 40, continueFrom: { text: 'Once upon', tokens: 12 } },
      'm',
      'llama-server',
      new Map(),
    );
    expect(body.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Once upon' },
    ]);
    expect(body).toMatchObject({ max_tokens: 28, continue_final_message: true, add_generation_prompt: false });
  });

  it('sends history with tool calls, tool results and image parts in OpenAI form', () => {
    const body = chatRequestBody(
      {
        ...base,
        messages: [
          {
            role: 'user',
            content: 'what is this?',
            parts: [
              { type: 'text', text: 'what is this?' },
              { type: 'image', image },
            ],
          },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":1}' }] },
          { role: 'tool', content: '{"a":2}', toolCallId: 'c1' },
        ],
      },
      'm',
      'openai',
      new Map([[image.sha256, 'data:image/png;base64,AAAA']]),
    );
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"a":2}' },
    ]);
  });

  it('asks llama-server which stop string ended a chat with stops, in its debugging field cut to the two fields read', () => {
    const stops = { ...base, stop: ['END'] };
    expect(chatRequestBody(stops, 'm', 'llama-server', new Map())).toMatchObject({
      stop: ['END'],
      verbose: true,
      response_fields: ['stop_type', 'stopping_word'],
    });
    expect(chatRequestBody(base, 'm', 'llama-server', new Map()).verbose).toBeUndefined();
    expect(chatRequestBody(stops, 'm', 'openai', new Map()).verbose).toBeUndefined();
    // On legacy completions llama-server would add the field to every token's chunk.
    expect(
      completionRequestBody({ ...stops, messages: [], prompts: ['a'] }, 'm', 'llama-server').verbose,
    ).toBeUndefined();
  });

  it('asks llama-server for one alternative when none is wanted, since it reports nothing for 0', () => {
    expect(chatRequestBody({ ...base, logprobs: 0 }, 'm', 'llama-server', new Map()).top_logprobs).toBe(1);
    expect(
      completionRequestBody({ ...base, messages: [], prompts: ['a', 'b'], logprobs: 0 }, 'm', 'openai'),
    ).toMatchObject({
      prompt: ['a', 'b'],
      logprobs: 0,
    });
  });
});

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
