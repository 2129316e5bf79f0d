import { describe, expect, it } from '@jest/globals';
import { ReplyAccumulator } from './reply-result.js';
import type { ReplyEvent } from './stream-events.js';

const delta = (seq: number, fields: Partial<Extract<ReplyEvent, { type: 'delta' }>>): ReplyEvent => ({
  type: 'delta',
  attempt: 1,
  seq,
  text: '',
  ...fields,
});

describe('ReplyAccumulator', () => {
  it("folds each tool call's pieces by index into the calls of its choice, in index order", () => {
    const folded = new ReplyAccumulator();
    const events: ReplyEvent[] = [
      { type: 'start', attempt: 1, seq: 0, promptTokens: 3, resumed: false },
      delta(1, { toolCall: { index: 0, id: 'call_1', name: 'f', arguments: '{"a":' } }),
      delta(2, { toolCall: { index: 1, id: 'call_2', name: 'g', arguments: '{}' } }),
      delta(3, { toolCall: { index: 0, arguments: '1}' } }),
      delta(4, { choice: 1, toolCall: { index: 0, id: 'call_3', name: 'g', arguments: '{}' } }),
    ];
    for (const event of events) expect(folded.apply(event)).toBeNull();
    const result = folded.apply({
      type: 'end',
      attempt: 1,
      seq: 5,
      finishReason: 'tool_calls',
      finishReasons: ['tool_calls', 'tool_calls'],
      usage: { promptTokens: 3, completionTokens: 9 },
    });
    expect(result?.choices.map((c) => c.toolCalls)).toEqual([
      [
        { id: 'call_1', name: 'f', arguments: '{"a":1}' },
        { id: 'call_2', name: 'g', arguments: '{}' },
      ],
      [{ id: 'call_3', name: 'g', arguments: '{}' }],
    ]);
  });

  it('gives each choice the stop sequence that ended it, and none to the others', () => {
    const folded = new ReplyAccumulator();
    folded.apply({ type: 'start', attempt: 1, seq: 0, promptTokens: 3, resumed: false });
    folded.apply(delta(1, { text: 'Hi' }));
    folded.apply(delta(2, { choice: 1, text: 'Yo' }));
    const result = folded.apply({
      type: 'end',
      attempt: 1,
      seq: 3,
      finishReason: 'stop',
      finishReasons: ['stop', 'stop'],
      stopSequences: [null, 'END'],
      usage: { promptTokens: 3, completionTokens: 4 },
    });
    expect(result?.choices).toEqual([
      { index: 0, text: 'Hi', finishReason: 'stop' },
      { index: 1, text: 'Yo', finishReason: 'stop', stopSequence: 'END' },
    ]);
  });
});
