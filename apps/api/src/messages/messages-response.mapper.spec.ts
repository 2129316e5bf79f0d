import { describe, expect, it } from '@jest/globals';
import type { ReplyEvent } from '@conveyor/queue';
import type { DeltaEvent } from '../contracts/reply-run.js';
import { MessageEventFormatter, toMessage, toMessagesUsage } from './messages-response.mapper.js';

const who = { id: 'msg_1', model: 'tiny', created: 1 };
const usage = { promptTokens: 12, completionTokens: 5, cachedTokens: 4 };
const delta = (fields: Partial<DeltaEvent>): DeltaEvent => ({ type: 'delta', attempt: 1, seq: 1, text: '', ...fields });
const end = (finishReason: 'stop' | 'length' | 'tool_calls'): Extract<ReplyEvent, { type: 'end' }> => ({
  type: 'end',
  attempt: 1,
  seq: 9,
  finishReason,
  usage,
});

describe('toMessage', () => {
  it('puts thinking (when asked for), text, then one tool_use block per call', () => {
    const reply = {
      choices: [
        {
          index: 0,
          text: 'Looking.',
          reasoning: 'hm',
          toolCalls: [
            { id: 'call_1', name: 'f', arguments: '{"a":1}' },
            { id: 'call_2', name: 'g', arguments: 'not json' },
          ],
          finishReason: 'tool_calls' as const,
        },
      ],
      usage,
    };
    expect(toMessage(who, reply, true)).toEqual({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'tiny',
      content: [
        { type: 'thinking', thinking: 'hm', signature: '' },
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
        { type: 'tool_use', id: 'call_2', name: 'g', input: { raw: 'not json' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 8,
        output_tokens: 5,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 4,
        service_tier: 'standard',
      },
    });
    expect(toMessage(who, reply, false).content[0]).toEqual({ type: 'text', text: 'Looking.' });
  });

  it('names a reply cut at the budget max_tokens, and keeps an empty reply as one empty text block', () => {
    const message = toMessage(who, { choices: [{ index: 0, text: '', finishReason: 'length' }], usage }, false);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.content).toEqual([{ type: 'text', text: '' }]);
  });

  it('names a reply cut short before max_tokens model_context_window_exceeded, sync and streamed', () => {
    const cut = (maxTokens?: number) =>
      toMessage(who, { choices: [{ index: 0, text: 'x', finishReason: 'length' }], usage }, false, maxTokens)
        .stop_reason;
    expect(cut(32000)).toBe('model_context_window_exceeded');
    expect(cut(5)).toBe('max_tokens');
    expect(cut()).toBe('max_tokens');
    const streamed = new MessageEventFormatter(who, false, 32000)
      .final(end('length'))
      .find((e) => e.type === 'message_delta');
    expect(streamed).toMatchObject({ delta: { stop_reason: 'model_context_window_exceeded', stop_sequence: null } });
    const ended = toMessage(who, { choices: [{ index: 0, text: 'x', finishReason: 'stop' }], usage }, false, 32000);
    expect(ended.stop_reason).toBe('end_turn');
  });

  it('names the stop sequence that ended the reply, and says end_turn for an end the engine did not name', () => {
    const stopped = toMessage(
      who,
      { choices: [{ index: 0, text: 'Hi', finishReason: 'stop', stopSequence: 'END' }], usage },
      false,
    );
    expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
    const ended = toMessage(who, { choices: [{ index: 0, text: 'Hi', finishReason: 'stop' }], usage }, false);
    expect(ended).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
  });

  it("counts the prompt tokens a cache reused apart, as Anthropic's usage does", () => {
    expect(toMessagesUsage({ promptTokens: 3, completionTokens: 1 })).toMatchObject({
      input_tokens: 3,
      cache_read_input_tokens: 0,
    });
  });
});

describe('MessageEventFormatter', () => {
  it('opens, fills and closes one block at a time, each under its own index', () => {
    const f = new MessageEventFormatter(who, true);
    const events = [
      ...f.opening({ type: 'start', attempt: 1, seq: 0, promptTokens: 12, resumed: false }),
      ...f.delta(delta({ reasoning: 'hm', text: 'He' })),
      ...f.delta(delta({ text: 'llo' })),
      ...f.delta(delta({ toolCall: { index: 0, id: 'call_1', name: 'f', arguments: '{"a"' } })),
      ...f.delta(delta({ toolCall: { index: 0, arguments: ':1}' } })),
      ...f.delta(delta({ toolCall: { index: 1, id: 'call_2', name: 'g', arguments: '{}' } })),
      ...f.final(end('tool_calls')),
    ];
    expect(events).toEqual([
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          content: [],
          model: 'tiny',
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 12, output_tokens: 0, service_tier: 'standard' },
        },
      },
      { type: 'ping' },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hm' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'He' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'llo' } },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'tool_use', id: 'call_1', name: 'f', input: {} },
      },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"a"' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: ':1}' } },
      { type: 'content_block_stop', index: 2 },
      {
        type: 'content_block_start',
        index: 3,
        content_block: { type: 'tool_use', id: 'call_2', name: 'g', input: {} },
      },
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{}' } },
      { type: 'content_block_stop', index: 3 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 5, input_tokens: 8, cache_read_input_tokens: 4 },
      },
      { type: 'message_stop' },
    ]);
  });

  it('leaves reasoning out unless thinking was asked for, and closes an empty reply with an empty text block', () => {
    const f = new MessageEventFormatter(who, false);
    expect(f.delta(delta({ reasoning: 'hm' }))).toEqual([]);
    expect(f.final(end('length')).map((e) => e.type)).toEqual([
      'content_block_start',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it("puts the stop sequence that ended the reply in message_delta's delta, and null when none did", () => {
    const messageDelta = (event: Extract<ReplyEvent, { type: 'end' }>) =>
      new MessageEventFormatter(who, false).final(event).find((e) => e.type === 'message_delta');
    expect(messageDelta({ ...end('stop'), stopSequences: ['\n\n'] })).toMatchObject({
      delta: { stop_reason: 'stop_sequence', stop_sequence: '\n\n' },
    });
    expect(messageDelta(end('stop'))).toMatchObject({ delta: { stop_reason: 'end_turn', stop_sequence: null } });
    expect(messageDelta(end('length'))).toMatchObject({ delta: { stop_reason: 'max_tokens', stop_sequence: null } });
  });
});
