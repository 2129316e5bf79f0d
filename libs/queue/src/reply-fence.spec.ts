import { describe, expect, it } from '@jest/globals';
import { ReplyFence, replayReply } from './reply-fence.js';
import type { ReplyEvent } from './stream-events.js';

const start = (attempt: number, seq = 0): ReplyEvent => ({ type: 'start', attempt, seq, promptTokens: 3, resumed: attempt > 1 });
const delta = (attempt: number, seq: number, text: string): ReplyEvent => ({ type: 'delta', attempt, seq, text });

describe('ReplyFence', () => {
  it('drops events of an attempt once a later one has started, and repeated seqs', () => {
    const fence = new ReplyFence();
    const events = [start(1), delta(1, 1, 'a'), delta(1, 1, 'a'), start(2), delta(1, 2, 'late'), delta(2, 1, 'b')];
    expect(events.map((e) => fence.accept(e))).toEqual([true, true, false, true, false, true]);
  });

  it('replays the text a client was shown across a restart', () => {
    const events = [start(1), delta(1, 1, 'Hel'), delta(1, 2, 'lo'), start(2), delta(1, 3, ' stale'), delta(2, 1, ' world')];
    expect(replayReply(events)).toEqual({ text: 'Hello world', ended: false });
    expect(replayReply([...events, { type: 'end', attempt: 2, seq: 2, finishReason: 'stop', usage: { promptTokens: 3, completionTokens: 4 } }]).ended).toBe(true);
  });
});
