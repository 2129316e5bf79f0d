import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { RequestProblem } from '@conveyor/protocol';
import type { ReplyResult } from '@conveyor/queue';
import { anthropicMessages } from './anthropic-messages.dialect.js';

const endpoint = anthropicMessages;
const body = (fields: Record<string, unknown> = {}) => ({
  model: 'm',
  max_tokens: 8,
  messages: [{ role: 'user', content: 'Hi' }],
  ...fields,
});
const reply: ReplyResult = {
  choices: [{ index: 0, text: 'Hello.', reasoning: 'greet', finishReason: 'stop' }],
  usage: { promptTokens: 5, completionTokens: 2 },
};
const who = { id: 'msg_msgbatch_1-1', model: 'm', created: 1 };

describe('anthropicMessages', () => {
  it("keeps the reply's thought for a request that turned thinking on, and only for it", () => {
    const thinking = endpoint.parse(body({ thinking: { type: 'enabled', budget_tokens: 4 } })).view?.();
    const plain = endpoint.parse(body()).view?.();
    expect(thinking).toEqual({ thinking: true, maxTokens: 8 });
    expect(plain).toEqual({ maxTokens: 8 });
    expect(endpoint.toResponse(who, reply, thinking!)).toMatchObject({
      type: 'message',
      content: [
        { type: 'thinking', thinking: 'greet' },
        { type: 'text', text: 'Hello.' },
      ],
    });
    expect(endpoint.toResponse(who, reply, plain!)).toMatchObject({ content: [{ type: 'text', text: 'Hello.' }] });
  });

  it('names a reply the end of the context cut short before max_tokens model_context_window_exceeded', () => {
    const cut: ReplyResult = { ...reply, choices: [{ index: 0, text: 'Once', finishReason: 'length' }] };
    const view = endpoint.parse(body({ max_tokens: 32000 })).view!();
    expect(endpoint.toResponse(who, cut, view)).toMatchObject({ stop_reason: 'model_context_window_exceeded' });
    expect(endpoint.toResponse(who, cut, { maxTokens: 2 })).toMatchObject({ stop_reason: 'max_tokens' });
  });

  it('refuses a request that asks to stream, and one the synchronous route refuses, naming the field', () => {
    const problem = (fields: Record<string, unknown>) => {
      try {
        endpoint.parse(body(fields));
        return null;
      } catch (err) {
        return err instanceof RequestProblem ? err.param : err;
      }
    };
    expect(problem({ stream: true })).toBe('stream');
    expect(problem({ max_tokens: 0 })).toBe('max_tokens');
    expect(problem({ stream: false })).toBeNull();
  });
});
