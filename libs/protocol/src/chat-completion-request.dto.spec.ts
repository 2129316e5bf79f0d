import 'reflect-metadata';
import { describe, it, expect } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { ChatCompletionRequestDto } from './chat-completion-request.dto.js';
import type { DeploymentTraits, SamplingPreset } from './deployment-traits.js';
import { DEFAULT_TEMPERATURE } from './sampling-fields.dto.js';
import { RequestProblem } from './request-problem.js';
import { deploymentTraits, IMAGE_LIMITS, jobOf, requestProblem } from '../../../test/support/request-bodies.js';
import { checkGeneration } from './checked-generation.js';

const deployment = (defaults: SamplingPreset = {}, traits: Partial<DeploymentTraits> = {}): DeploymentTraits =>
  deploymentTraits({ defaults, ...traits });

const toChatJob = (
  request: ChatCompletionRequestDto,
  requestId: string,
  id: string,
  defaults: SamplingPreset = {},
  now?: number,
) => jobOf(request, requestId, deployment(defaults, { id }), now);

const dto = (extra: Record<string, unknown> = {}) =>
  plainToInstance(ChatCompletionRequestDto, {
    model: 'conveyor-tiny',
    messages: [{ role: 'user', content: 'Hi' }],
    ...extra,
  });

describe('ChatCompletionRequestDto.toJob', () => {
  it('carries the request id, deployment and enqueue time', () => {
    const job = toChatJob(dto(), 'req-1', 'conveyor-tiny', {}, 1_700_000_000_000);
    expect(job.requestId).toBe('req-1');
    expect(job.deployment).toBe('conveyor-tiny');
    expect(job.enqueuedAt).toBe(1_700_000_000_000);
    expect(job.messages).toEqual([{ role: 'user', content: 'Hi' }]);
    expect(job.stop).toEqual([]);
    expect(job.maxTokens).toBeUndefined();
  });

  it('stamps the current time when none is given', () => {
    const before = Date.now();
    const job = toChatJob(dto(), 'r', 'd');
    expect(job.enqueuedAt).toBeGreaterThanOrEqual(before);
    expect(job.enqueuedAt).toBeLessThanOrEqual(Date.now());
  });

  it('folds the developer role into system and keeps the others', () => {
    const job = toChatJob(
      dto({
        messages: [
          { role: 'developer', content: 'Rules' },
          { role: 'system', content: 'More rules' },
          { role: 'user', content: 'Q' },
          { role: 'assistant', content: 'A' },
        ],
      }),
      'r',
      'd',
    );
    expect(job.messages.map((m) => m.role)).toEqual(['system', 'system', 'user', 'assistant']);
    expect(job.messages[0].content).toBe('Rules');
  });

  it('carries tools, the tool choice, and parallel_tool_calls only when it limits a reply to one call', () => {
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    expect(toChatJob(dto({ tools }), 'r', 'd')).toMatchObject({ tools: [{ name: 'f' }], toolChoice: 'auto' });
    expect(toChatJob(dto({ tools }), 'r', 'd').parallelToolCalls).toBeUndefined();
    expect(toChatJob(dto({ tools, parallel_tool_calls: true }), 'r', 'd').parallelToolCalls).toBeUndefined();
    expect(toChatJob(dto({ tools, parallel_tool_calls: false }), 'r', 'd').parallelToolCalls).toBe(false);
    // Without tools there are no calls to limit.
    expect(toChatJob(dto({ parallel_tool_calls: false }), 'r', 'd').parallelToolCalls).toBeUndefined();
  });

  it("joins text parts with '\\n'", () => {
    const content = [
      { type: 'text', text: 'line one' },
      { type: 'text', text: 'line two' },
    ];
    const job = toChatJob(dto({ messages: [{ role: 'user', content }] }), 'r', 'd');
    expect(job.messages[0].content).toBe('line one\nline two');
  });

  it('prefers max_completion_tokens over max_tokens and falls back to max_tokens', () => {
    expect(toChatJob(dto({ max_tokens: 10, max_completion_tokens: 20 }), 'r', 'd').maxTokens).toBe(20);
    expect(toChatJob(dto({ max_tokens: 10 }), 'r', 'd').maxTokens).toBe(10);
    expect(toChatJob(dto({ max_tokens: 10, max_completion_tokens: null }), 'r', 'd').maxTokens).toBe(10);
    expect(toChatJob(dto({ max_tokens: null, max_completion_tokens: null }), 'r', 'd').maxTokens).toBeUndefined();
  });

  it('turns the stop field into a list', () => {
    expect(toChatJob(dto({ stop: 'END' }), 'r', 'd').stop).toEqual(['END']);
    expect(toChatJob(dto({ stop: ['a', 'b'] }), 'r', 'd').stop).toEqual(['a', 'b']);
    expect(toChatJob(dto({ stop: null }), 'r', 'd').stop).toEqual([]);
  });
});

describe('ChatCompletionRequestDto.sampling', () => {
  it('defaults the temperature to 1, as OpenAI does, when it is unset or null', () => {
    expect(DEFAULT_TEMPERATURE).toBe(1);
    expect(dto().sampling().temperature).toBe(1);
    expect(dto({ temperature: null }).sampling().temperature).toBe(1);
  });

  it('keeps an explicit temperature of 0', () => {
    expect(dto({ temperature: 0 }).sampling().temperature).toBe(0);
  });

  it('turns null fields into undefined', () => {
    const sampling = dto({
      top_p: null,
      top_k: null,
      min_p: null,
      repetition_penalty: null,
      repeat_penalty: null,
      presence_penalty: null,
      frequency_penalty: null,
      seed: null,
    }).sampling();
    expect(sampling).toEqual({
      temperature: 1,
      topP: undefined,
      topK: undefined,
      minP: undefined,
      repeatPenalty: undefined,
      presencePenalty: undefined,
      frequencyPenalty: undefined,
      seed: undefined,
    });
  });

  it('renames the OpenAI fields', () => {
    expect(
      dto({
        temperature: 0.5,
        top_p: 0.9,
        top_k: 40,
        min_p: 0.05,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        seed: 42,
      }).sampling(),
    ).toMatchObject({
      temperature: 0.5,
      topP: 0.9,
      topK: 40,
      minP: 0.05,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      seed: 42,
    });
  });

  it('takes repetition_penalty over repeat_penalty, and repeat_penalty alone when it is the only one', () => {
    expect(dto({ repetition_penalty: 1.2, repeat_penalty: 1.5 }).sampling().repeatPenalty).toBe(1.2);
    expect(dto({ repeat_penalty: 1.5 }).sampling().repeatPenalty).toBe(1.5);
    expect(dto({ repetition_penalty: null, repeat_penalty: 1.5 }).sampling().repeatPenalty).toBe(1.5);
  });
});

describe('ChatCompletionRequestDto.stopList', () => {
  it('normalises every accepted shape to a fresh array', () => {
    expect(dto().stopList()).toEqual([]);
    expect(dto({ stop: null }).stopList()).toEqual([]);
    expect(dto({ stop: 'x' }).stopList()).toEqual(['x']);
    const list = ['a', 'b'];
    const request = dto({ stop: list });
    expect(request.stopList()).toEqual(list);
    expect(request.stopList()).not.toBe(request.stop);
  });
});

describe('deployment presets', () => {
  const preset = { temperature: 0.1, top_k: 50, repetition_penalty: 1.05, max_tokens: 64 };

  it('fill the fields a request leaves unset or null', () => {
    const job = toChatJob(dto({ temperature: null }), 'r', 'd', preset);
    expect(job.sampling).toMatchObject({ temperature: 0.1, topK: 50, repeatPenalty: 1.05 });
    expect(job.maxTokens).toBe(64);
  });

  it("never override the request's own value, including zero", () => {
    const job = toChatJob(dto({ temperature: 0, top_k: 5, repeat_penalty: 1.3, max_tokens: 8 }), 'r', 'd', preset);
    expect(job.sampling).toMatchObject({ temperature: 0, topK: 5, repeatPenalty: 1.3 });
    expect(job.maxTokens).toBe(8);
  });
});

describe('ChatCompletionRequestDto.check', () => {
  const problem = (request: ChatCompletionRequestDto, traits: Partial<DeploymentTraits> = {}): RequestProblem =>
    requestProblem(() => checkGeneration(request, deployment({}, traits), IMAGE_LIMITS));

  it('accepts a plain request', () => {
    expect(() => checkGeneration(dto({ max_tokens: 16, n: 2 }), deployment(), IMAGE_LIMITS)).not.toThrow();
  });

  it('refuses what the deployment cannot do, naming the field', () => {
    expect(problem(dto(), { task: 'embeddings' })).toMatchObject({ param: 'model', code: 'model_not_supported' });
    expect(problem(dto({ max_tokens: 4096 }))).toMatchObject({ param: 'max_tokens', code: 'context_length_exceeded' });
    expect(problem(dto({ max_completion_tokens: 5000, max_tokens: 8 }))).toMatchObject({ param: 'max_tokens' });
    expect(problem(dto({ n: 5 }))).toMatchObject({ param: 'n', code: 'invalid_value' });
    expect(problem(dto({ min_tokens: 9, max_tokens: 8 }))).toMatchObject({ param: 'min_tokens' });
  });

  it('refuses a prompt longer than the context could hold at the deployment bound of characters per token', () => {
    const long = 'x'.repeat(4096 * 32 + 1);
    expect(problem(dto({ messages: [{ role: 'user', content: long }] }))).toMatchObject({
      param: 'messages',
      code: 'context_length_exceeded',
    });
    expect(() =>
      checkGeneration(dto({ messages: [{ role: 'user', content: long.slice(1) }] }), deployment(), IMAGE_LIMITS),
    ).not.toThrow();
    const parts = [
      { type: 'text', text: long.slice(0, 70_000) },
      { type: 'text', text: long.slice(70_000) },
    ];
    expect(problem(dto({ messages: [{ role: 'user', content: parts }] }))).toMatchObject({ param: 'messages' });
  });

  it("checks max_tokens against the deployment's preset when the request sets none", () => {
    expect(() => checkGeneration(dto(), deployment({ max_tokens: 5000 }), IMAGE_LIMITS)).toThrow(RequestProblem);
  });

  it('refuses inconsistent fields', () => {
    expect(problem(dto({ top_logprobs: 2 }))).toMatchObject({ param: 'top_logprobs' });
    expect(problem(dto({ messages: [{ role: 'tool', content: 'r', tool_call_id: 'call_x' }] }))).toMatchObject({
      param: 'messages[0].tool_call_id',
    });
    const tool = { type: 'function', function: { name: 'f' } };
    expect(problem(dto({ tools: [tool, tool] }))).toMatchObject({ param: 'tools[1].function.name' });
    expect(problem(dto({ tool_choice: 'required' }))).toMatchObject({ param: 'tool_choice' });
    expect(problem(dto({ tools: [tool], tool_choice: { type: 'function', function: { name: 'g' } } }))).toMatchObject({
      param: 'tool_choice.function.name',
    });
    // A format beside tools holds the reply's text when the model answers instead of calling.
    expect(() =>
      checkGeneration(dto({ tools: [tool], response_format: { type: 'json_object' } }), deployment(), IMAGE_LIMITS),
    ).not.toThrow();
  });

  it('names the invalid schema keyword by its path', () => {
    const format = { type: 'json_schema', json_schema: { name: 's', schema: { type: 'string', pattern: 'a+(' } } };
    expect(problem(dto({ response_format: format }))).toMatchObject({
      code: 'invalid_schema',
      param: 'response_format.json_schema.schema.pattern',
    });
  });

  it('never fetches an image URL', () => {
    const content = [{ type: 'image_url', image_url: { url: 'http://169.254.169.254/latest' } }];
    expect(problem(dto({ messages: [{ role: 'user', content }] }))).toMatchObject({
      param: 'messages[0].content[0].image_url.url',
      code: 'invalid_image_url',
    });
  });
});
