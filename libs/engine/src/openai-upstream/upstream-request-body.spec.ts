import { describe, expect, it } from '@jest/globals';
import type { ImageRef } from '@conveyor/queue';
import type { GenerateRequest } from '../core/generation-engine.js';
import { chatRequestBody, completionRequestBody } from './upstream-request-body.js';

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
