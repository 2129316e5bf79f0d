import { describe, expect, it } from '@jest/globals';
import type { ResponseStreamEvent } from '@conveyor/openai';
import type { ReplyResult } from '@conveyor/queue';
import { encodeReasoning } from '@conveyor/protocol';
import { codexRequest } from '../../../../test/support/codex-request.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import type { DeltaEvent, EndEvent } from '../contracts/reply-run.js';
import { ResponseEventFormatter, responseError, toResponseObject } from './response-events.mapper.js';
import { DEFAULT_ECHO, customInput, type ResponseEcho } from './response.mapper.js';

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
    const thought = { type: 'reasoning_text', text: 'Two cities.' };
    expect(response.output).toEqual([
      { type: 'reasoning', id: `rs_${HEX}`, summary: [], content: [thought], status: 'completed' },
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
    // The streamed response ends as the unstreamed one is: one builder makes both.
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
    expect(result).toEqual(expected);
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

describe('calls of namespace and custom tools, reasoning content, cut and failed replies', () => {
  const echo: ResponseEcho = { ...DEFAULT_ECHO, tools: codexRequest('m').tools as ResponseEcho['tools'] };
  const calls = [
    { id: 'call_p', name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\n*** End Patch\n' }) },
    { id: 'call_c', name: 'multi_agent_v1__close_agent', arguments: '{"target":"t1"}' },
  ];
  const stream = (deltas: DeltaEvent[], reason: EndEvent['finishReason'], options = {}) => {
    const f = new ResponseEventFormatter(who, echo, options);
    const events = [...f.opening(), ...deltas.flatMap((d) => f.delta(d)), ...f.final(end(reason))];
    return { events, result: f.result };
  };

  it("names each call back as the client declared its tool: a custom_tool_call with its input, a namespace's function with its namespace", () => {
    const reply: ReplyResult = {
      choices: [{ index: 0, text: '', toolCalls: calls, finishReason: 'tool_calls' }],
      usage,
    };
    expect(toResponseObject(who, reply, echo).output).toEqual([
      {
        type: 'custom_tool_call',
        id: `ctc_${HEX}_0`,
        call_id: 'call_p',
        name: 'apply_patch',
        input: '*** Begin Patch\n*** End Patch\n',
        status: 'completed',
      },
      {
        type: 'function_call',
        id: `fc_${HEX}_1`,
        call_id: 'call_c',
        name: 'close_agent',
        namespace: 'multi_agent_v1',
        arguments: '{"target":"t1"}',
        status: 'completed',
      },
    ]);
    expect(customInput('not json')).toBe('not json');
  });

  it("streams a custom call's input whole at its end, and ends with the same items, ids included, as the stream made", () => {
    const { events, result } = stream(
      [
        delta({
          toolCall: { index: 0, id: 'call_p', name: 'apply_patch', arguments: calls[0]!.arguments.slice(0, 9) },
        }),
        delta({ toolCall: { index: 0, arguments: calls[0]!.arguments.slice(9) } }),
        delta({ toolCall: { index: 1, id: 'call_c', name: calls[1]!.name, arguments: calls[1]!.arguments } }),
      ],
      'tool_calls',
    );
    expect(events.filter((e) => e.type.startsWith('response.custom_tool_call_input'))).toEqual([
      expect.objectContaining({
        type: 'response.custom_tool_call_input.delta',
        delta: '*** Begin Patch\n*** End Patch\n',
      }),
      expect.objectContaining({
        type: 'response.custom_tool_call_input.done',
        input: '*** Begin Patch\n*** End Patch\n',
      }),
    ]);
    expect(
      events.some((e) => e.type === 'response.function_call_arguments.delta' && e.item_id.startsWith('ctc_')),
    ).toBe(false);
    const done = events.flatMap((e) => (e.type === 'response.output_item.done' ? [e.item] : []));
    const added = events.flatMap((e) => (e.type === 'response.output_item.added' ? [e.item.id] : []));
    expect(result?.output).toEqual(done);
    expect(result?.output.map((i) => i.id)).toEqual(added);
    expect(done[1]).toMatchObject({ type: 'function_call', name: 'close_agent', namespace: 'multi_agent_v1' });
  });

  it('puts encrypted_content on reasoning only when asked, and marks a cut message incomplete', () => {
    const reply: ReplyResult = {
      choices: [{ index: 0, text: 'Hal', reasoning: 'Think', finishReason: 'length' }],
      usage,
    };
    const asked = toResponseObject(who, reply, echo, { encryptReasoning: true });
    expect(asked.output[0]).toMatchObject({ type: 'reasoning', encrypted_content: encodeReasoning('Think') });
    expect(asked.output[1]).toMatchObject({ type: 'message', status: 'incomplete' });
    expect(toResponseObject(who, reply, echo).output[0]).not.toHaveProperty('encrypted_content');
    const { result } = stream([delta({ reasoning: 'Think' }), delta({ text: 'Hal' })], 'length', {
      encryptReasoning: true,
    });
    expect(result?.output).toEqual([
      { ...asked.output[0], status: 'completed' },
      { ...asked.output[1], status: 'incomplete' },
    ]);
  });

  it("makes a failure a last response.failed event with the output so far and OpenAI's error code", () => {
    const f = new ResponseEventFormatter(who, echo);
    const events = [...f.opening(), ...f.delta(delta({ text: 'Hi' }))];
    const failed = f.failed(OpenAiHttpError.serverError('The worker died.', 'reply_restarted'));
    expect(failed).toMatchObject({
      type: 'response.failed',
      sequence_number: events.length,
      response: { status: 'failed', error: { code: 'server_error', message: 'The worker died.' } },
    });
    expect(responseError(OpenAiHttpError.unavailable('Busy.'))).toEqual({ code: 'server_error', message: 'Busy.' });
    expect(responseError(new OpenAiHttpError(429, 'rate_limit_error', 'Slow down.'))).toMatchObject({
      code: 'rate_limit_exceeded',
    });
  });
});
