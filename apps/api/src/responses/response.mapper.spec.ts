import { describe, expect, it } from '@jest/globals';
import type { ResponseStreamEvent } from '@conveyor/openai';
import type { ReplyResult } from '@conveyor/queue';
import type { DeltaEvent, EndEvent } from '../generation/reply-run.js';
import { ResponseEventFormatter } from './response-events.mapper.js';
import { DEFAULT_ECHO, toResponseObject } from './response.mapper.js';

const who = { id: 'resp_0a1b2c3d-0000-4000-8000-000000000001', model: 'm', created: 100 };
const HEX = '0a1b2c3d000040008000000000000001';
const usage = { promptTokens: 10, completionTokens: 5, cachedTokens: 4 };
const delta = (fields: Partial<DeltaEvent>): DeltaEvent => ({ type: 'delta', attempt: 1, seq: 0, text: '', ...fields });
const end = (finishReason: EndEvent['finishReason']): EndEvent => ({
  type: 'end',
  attempt: 1,
  seq: 9,
  finishReason,
  usage,
});

describe('toResponseObject', () => {
  it('maps reasoning, text and every tool call to output items, in that order', () => {
    const reply: ReplyResult = {
      choices: [
        {
          index: 0,
          text: 'Checking.',
          reasoning: 'Two cities.',
          toolCalls: [
            { id: 'call_a', name: 'weather', arguments: '{"city":"Paris"}' },
            { id: 'call_b', name: 'weather', arguments: '{"city":"Rome"}' },
          ],
          finishReason: 'tool_calls',
        },
      ],
      usage,
    };
    const response = toResponseObject(who, reply);
    expect(response).toMatchObject({
      id: who.id,
      object: 'response',
      created_at: 100,
      status: 'completed',
      incomplete_details: null,
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 15,
      },
    });
    expect(response.output).toEqual([
      { type: 'reasoning', id: `rs_${HEX}`, summary: [], content: [{ type: 'reasoning_text', text: 'Two cities.' }] },
      {
        type: 'message',
        id: `msg_${HEX}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Checking.', annotations: [], logprobs: [] }],
      },
      {
        type: 'function_call',
        id: `fc_${HEX}_0`,
        call_id: 'call_a',
        name: 'weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      },
      {
        type: 'function_call',
        id: `fc_${HEX}_1`,
        call_id: 'call_b',
        name: 'weather',
        arguments: '{"city":"Rome"}',
        status: 'completed',
      },
    ]);
  });

  it('leaves the message out of a reply that only calls tools, and marks a cut reply incomplete', () => {
    const calls: ReplyResult = {
      choices: [
        { index: 0, text: '', toolCalls: [{ id: 'c', name: 'f', arguments: '{}' }], finishReason: 'tool_calls' },
      ],
      usage,
    };
    expect(toResponseObject(who, calls).output.map((i) => i.type)).toEqual(['function_call']);
    const cut = toResponseObject(who, { choices: [{ index: 0, text: 'abc', finishReason: 'length' }], usage });
    expect(cut).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });
});

describe('ResponseEventFormatter', () => {
  const run = (deltas: DeltaEvent[], reason: EndEvent['finishReason']) => {
    const f = new ResponseEventFormatter(who, DEFAULT_ECHO);
    const events: ResponseStreamEvent[] = [
      ...f.opening(),
      ...deltas.flatMap((d) => f.delta(d)),
      ...f.final(end(reason)),
    ];
    return { events, result: f.result };
  };

  it('streams reasoning, text and two calls as the Responses event sequence, numbered from 0', () => {
    const { events, result } = run(
      [
        delta({ reasoning: 'Hm' }),
        delta({ reasoning: 'm.', text: 'Hi' }),
        delta({ text: '!', toolCall: { index: 0, id: 'call_a', name: 'f', arguments: '{"a"' } }),
        delta({ toolCall: { index: 0, arguments: ':1}' } }),
        delta({ toolCall: { index: 1, id: 'call_b', name: 'g', arguments: '{}' } }),
      ],
      'tool_calls',
    );
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.filter((e) => e.type === 'response.function_call_arguments.done')).toEqual([
      expect.objectContaining({ output_index: 2, name: 'f', arguments: '{"a":1}', item_id: `fc_${HEX}_0` }),
      expect.objectContaining({ output_index: 3, name: 'g', arguments: '{}', item_id: `fc_${HEX}_1` }),
    ]);
    // The streamed response ends as the unstreamed one would be.
    const reply: ReplyResult = {
      choices: [
        {
          index: 0,
          text: 'Hi!',
          reasoning: 'Hmm.',
          toolCalls: [
            { id: 'call_a', name: 'f', arguments: '{"a":1}' },
            { id: 'call_b', name: 'g', arguments: '{}' },
          ],
          finishReason: 'tool_calls',
        },
      ],
      usage,
    };
    const expected = toResponseObject(who, reply);
    expect(result).toEqual({ ...expected, output: expected.output.map((i) => ({ ...i, status: 'completed' })) });
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: result });
  });

  it('ends an empty reply with one empty message, and a cut one with response.incomplete', () => {
    const { events, result } = run([], 'length');
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.incomplete',
    ]);
    expect(result).toMatchObject({ status: 'incomplete', output: [{ type: 'message', content: [{ text: '' }] }] });
  });

  it('makes the same events, with the same numbers, when a reply is replayed', () => {
    const deltas = [delta({ text: 'a' }), delta({ text: 'b' })];
    expect(run(deltas, 'stop').events).toEqual(run(deltas, 'stop').events);
  });
});
