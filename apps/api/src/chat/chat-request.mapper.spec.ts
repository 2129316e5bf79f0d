import 'reflect-metadata';
import { describe, it, expect } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { ChatCompletionRequestDto } from '@conveyor/validation';
import { DEFAULT_TEMPERATURE, toChatJob, toSampling, toStopList } from './chat-request.mapper.js';

const dto = (extra: Record<string, unknown> = {}) =>
  plainToInstance(ChatCompletionRequestDto, { model: 'conveyor-tiny', messages: [{ role: 'user', content: 'Hi' }], ...extra });

describe('toChatJob', () => {
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

describe('toSampling', () => {
  it('defaults the temperature to 1, as OpenAI does, when it is unset or null', () => {
    expect(DEFAULT_TEMPERATURE).toBe(1);
    expect(toSampling(dto()).temperature).toBe(1);
    expect(toSampling(dto({ temperature: null })).temperature).toBe(1);
  });

  it('keeps an explicit temperature of 0', () => {
    expect(toSampling(dto({ temperature: 0 })).temperature).toBe(0);
  });

  it('turns null fields into undefined', () => {
    const sampling = toSampling(
      dto({
        top_p: null,
        top_k: null,
        min_p: null,
        repetition_penalty: null,
        repeat_penalty: null,
        presence_penalty: null,
        frequency_penalty: null,
        seed: null,
      }),
    );
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
      toSampling(dto({ temperature: 0.5, top_p: 0.9, top_k: 40, min_p: 0.05, presence_penalty: 0.1, frequency_penalty: 0.2, seed: 42 })),
    ).toMatchObject({ temperature: 0.5, topP: 0.9, topK: 40, minP: 0.05, presencePenalty: 0.1, frequencyPenalty: 0.2, seed: 42 });
  });

  it('takes repetition_penalty over repeat_penalty, and repeat_penalty alone when it is the only one', () => {
    expect(toSampling(dto({ repetition_penalty: 1.2, repeat_penalty: 1.5 })).repeatPenalty).toBe(1.2);
    expect(toSampling(dto({ repeat_penalty: 1.5 })).repeatPenalty).toBe(1.5);
    expect(toSampling(dto({ repetition_penalty: null, repeat_penalty: 1.5 })).repeatPenalty).toBe(1.5);
  });
});

describe('toStopList', () => {
  it('normalises every accepted shape to a fresh array', () => {
    expect(toStopList(undefined)).toEqual([]);
    expect(toStopList(null)).toEqual([]);
    expect(toStopList('x')).toEqual(['x']);
    const list = ['a', 'b'];
    expect(toStopList(list)).toEqual(list);
    expect(toStopList(list)).not.toBe(list);
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
