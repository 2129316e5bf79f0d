import { describe, it, expect } from '@jest/globals';
import { ChunkFormatter, toChatCompletion, toUsage, type ReplyIdentity } from './chat-response.mapper.js';

const who: ReplyIdentity = { id: 'chatcmpl-abc', model: 'conveyor-tiny', created: 1_700_000_000 };
const usage = { promptTokens: 12, completionTokens: 5 };

describe('toUsage', () => {
  it('renames the counts and adds their sum as total_tokens', () => {
    expect(toUsage(usage)).toEqual({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    expect(toUsage({ promptTokens: 0, completionTokens: 0 }).total_tokens).toBe(0);
  });
});

describe('toChatCompletion', () => {
  it('builds an OpenAI chat.completion with one assistant choice', () => {
    const completion = toChatCompletion(who, {
      choices: [{ index: 0, text: 'Hello there', finishReason: 'length' }],
      usage,
    });
    expect(completion).toEqual({
      id: 'chatcmpl-abc',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'conveyor-tiny',
      service_tier: 'default',
      system_fingerprint: null,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello there', refusal: null },
          logprobs: null,
          finish_reason: 'length',
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    });
  });

  it('gives a tool-calling reply null content, its calls in OpenAI shape, and reasoning apart', () => {
    const call = { id: 'call_1', name: 'f', arguments: '{"a":1}' };
    const completion = toChatCompletion(who, {
      choices: [{ index: 0, text: '', reasoning: 'hm', toolCalls: [call], finishReason: 'tool_calls' }],
      usage,
    });
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        reasoning_content: 'hm',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        refusal: null,
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
  });

  it('lists every call of a reply in order', () => {
    const calls = [
      { id: 'call_1', name: 'f', arguments: '{"a":1}' },
      { id: 'call_2', name: 'g', arguments: '{}' },
    ];
    const [choice] = toChatCompletion(who, {
      choices: [{ index: 0, text: '', toolCalls: calls, finishReason: 'tool_calls' }],
      usage,
    }).choices;
    expect(choice!.message.content).toBeNull();
    expect(choice!.message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
      { id: 'call_2', type: 'function', function: { name: 'g', arguments: '{}' } },
    ]);
    expect(choice!.finish_reason).toBe('tool_calls');
  });
});

const delta = (fields: Record<string, unknown>) => ({
  type: 'delta' as const,
  attempt: 1,
  seq: 1,
  text: '',
  ...fields,
});

describe('ChunkFormatter', () => {
  const shared = {
    id: who.id,
    object: 'chat.completion.chunk',
    created: who.created,
    model: who.model,
    service_tier: 'default',
    system_fingerprint: null,
  };

  describe('without include_usage', () => {
    const f = new ChunkFormatter(who, false);

    it('opens with the assistant role and empty content', () => {
      const [chunk] = f.roleChunks();
      expect(chunk).toMatchObject(shared);
      expect(chunk.choices).toEqual([
        { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
      ]);
    });

    it('carries text in content chunks', () => {
      expect(f.deltaChunks(delta({ text: 'Hel' }))[0].choices).toEqual([
        { index: 0, delta: { content: 'Hel' }, logprobs: null, finish_reason: null },
      ]);
    });

    it('closes with one chunk: an empty delta and the finish reason', () => {
      const final = f.finalChunks(['stop'], usage);
      expect(final).toHaveLength(1);
      expect(final[0]).toMatchObject(shared);
      expect(final[0].choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
    });

    it('streams reasoning, then text, then a tool call piece, each choice under its own index', () => {
      const chunks = f.deltaChunks(
        delta({ choice: 2, reasoning: 'r', text: 't', toolCall: { index: 0, id: 'call_1', name: 'f', arguments: '' } }),
      );
      expect(chunks.map((c) => c.choices[0])).toEqual([
        { index: 2, delta: { reasoning_content: 'r' }, logprobs: null, finish_reason: null },
        { index: 2, delta: { content: 't' }, logprobs: null, finish_reason: null },
        {
          index: 2,
          delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] },
          logprobs: null,
          finish_reason: null,
        },
      ]);
      expect(f.finalChunks(['stop', 'length'], usage).map((c) => c.choices[0].finish_reason)).toEqual([
        'stop',
        'length',
      ]);
    });

    it("streams each call under its own index: id, type and name on the call's first piece, then arguments", () => {
      const pieces = [
        { index: 0, id: 'call_1', name: 'f', arguments: '' },
        { index: 0, arguments: '{}' },
        { index: 1, id: 'call_2', name: 'g', arguments: '{"b":' },
        { index: 1, arguments: '2}' },
      ];
      expect(pieces.flatMap((toolCall) => f.deltaChunks(delta({ toolCall }))[0]!.choices[0]!.delta.tool_calls)).toEqual(
        [
          { index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } },
          { index: 0, function: { arguments: '{}' } },
          { index: 1, id: 'call_2', type: 'function', function: { name: 'g', arguments: '{"b":' } },
          { index: 1, function: { arguments: '2}' } },
        ],
      );
      expect(f.finalChunks(['tool_calls'], usage)[0]!.choices[0]!.finish_reason).toBe('tool_calls');
    });

    it('has no usage key on any chunk', () => {
      for (const chunk of [
        ...f.roleChunks(),
        ...f.deltaChunks(delta({ text: 'x' })),
        ...f.finalChunks(['length'], usage),
      ]) {
        expect(Object.hasOwn(chunk, 'usage')).toBe(false);
      }
    });
  });

  describe('with include_usage', () => {
    const f = new ChunkFormatter(who, true);

    it('puts usage: null on every choice chunk', () => {
      const [last] = f.finalChunks(['stop'], usage);
      for (const chunk of [...f.roleChunks(), ...f.deltaChunks(delta({ text: 'x' })), last]) {
        expect(Object.hasOwn(chunk, 'usage')).toBe(true);
        expect(chunk.usage).toBeNull();
      }
    });

    it('adds a last chunk with no choices and the usage', () => {
      const final = f.finalChunks(['length'], usage);
      expect(final).toHaveLength(2);
      expect(final[0].choices[0]).toMatchObject({ delta: {}, finish_reason: 'length' });
      expect(final[1]).toEqual({
        ...shared,
        choices: [],
        usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
      });
    });
  });
});
