import { describe, expect, it } from '@jest/globals';
import { decodeReplyGroup, decodeReplyRecord, encodeReplyGroup, encodeReplyRecord } from './reply-codec.js';
import type { ReplyEvent } from './stream-events.js';

const reply: ReplyEvent[] = [
  { type: 'start', attempt: 1, seq: 0, promptTokens: 12, resumed: false },
  { type: 'delta', attempt: 1, seq: 1, text: 'Hel', tokens: 2 },
  { type: 'delta', attempt: 1, seq: 2, text: 'lo 👋', tokens: 4, choice: 1 },
  { type: 'delta', attempt: 1, seq: 3, text: '', reasoning: 'thinking', tokens: 5 },
  {
    type: 'delta',
    attempt: 1,
    seq: 4,
    text: '',
    toolCall: { index: 0, id: 'call_1', name: 'f', arguments: '{"a":' },
    tokens: 6,
  },
  {
    type: 'delta',
    attempt: 1,
    seq: 5,
    text: 'x',
    logprobs: [{ token: 'x', logprob: -0.5, bytes: [120], top: [] }],
  },
];

describe('reply codec', () => {
  it("writes a tokenize job's answer and reads it back, with and without detokenized text", () => {
    const answer: ReplyEvent[] = [
      { type: 'tokens', attempt: 1, seq: 0, tokens: [1, 2, 3], maxModelLen: 2048 },
      { type: 'tokens', attempt: 1, seq: 1, tokens: [4], maxModelLen: 512, text: 'Hi' },
    ];
    expect(decodeReplyGroup(encodeReplyGroup(answer))).toEqual(answer);
  });

  it('writes a group of one attempt and reads back the same events', () => {
    expect(decodeReplyGroup(encodeReplyGroup(reply))).toEqual(reply);
    const end: ReplyEvent[] = [
      { type: 'delta', attempt: 2, seq: 7, text: '.' },
      {
        type: 'end',
        attempt: 2,
        seq: 8,
        finishReason: 'stop',
        finishReasons: ['stop', 'length'],
        usage: { promptTokens: 3, completionTokens: 9, cachedTokens: 1 },
      },
      { type: 'error', attempt: 2, seq: 9, status: 400, code: 'invalid_value', message: 'no', param: 'n' },
      { type: 'embedding', attempt: 2, seq: 10, index: 0, vector: 'AAAA' },
    ];
    expect(decodeReplyGroup(encodeReplyGroup(end))).toEqual(end);
  });

  it('writes the stop sequence that ended a choice only when one did, with or without several finish reasons', () => {
    const usage = { promptTokens: 3, completionTokens: 4 };
    const one: ReplyEvent = { type: 'end', attempt: 1, seq: 1, finishReason: 'stop', stopSequences: ['END'], usage };
    const two: ReplyEvent = {
      type: 'end',
      attempt: 1,
      seq: 1,
      finishReason: 'length',
      finishReasons: ['length', 'stop'],
      stopSequences: [null, '\n\n'],
      usage,
    };
    const none: ReplyEvent = { type: 'end', attempt: 1, seq: 1, finishReason: 'stop', usage };
    for (const end of [one, two, none]) {
      expect(decodeReplyGroup(encodeReplyGroup([end]))).toEqual([end]);
      expect(decodeReplyRecord(encodeReplyRecord([end]))).toEqual([end]);
    }
    // A reply no stop sequence ended costs nothing more than before.
    expect(encodeReplyGroup([none])).toBe(JSON.stringify([1, 1, [4, 'stop', usage]]));
  });

  it('costs a few bytes a plain token beyond its text', () => {
    const deltas: ReplyEvent[] = Array.from({ length: 100 }, (_, i) => ({
      type: 'delta',
      attempt: 1,
      seq: i,
      text: 'ab',
      tokens: 2 * (i + 1),
    }));
    expect(encodeReplyGroup(deltas).length / 100).toBeLessThan(15);
    expect(encodeReplyRecord(deltas).length / 100).toBeLessThan(2 + 10);
  });

  it('folds a finished reply of several attempts into one record that reads back its events', () => {
    const events: ReplyEvent[] = [
      ...reply,
      // A resumed attempt, its seqs from 0 again.
      { type: 'start', attempt: 2, seq: 0, promptTokens: 12, resumed: true },
      { type: 'delta', attempt: 2, seq: 1, text: ' again' },
      { type: 'end', attempt: 2, seq: 2, finishReason: 'length', usage: { promptTokens: 12, completionTokens: 8 } },
    ];
    expect(decodeReplyRecord(encodeReplyRecord(events))).toEqual(events);
  });
});
