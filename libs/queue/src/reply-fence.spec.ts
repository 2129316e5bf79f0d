import { describe, expect, it } from '@jest/globals';
import { ReplyFence, replayReply } from './reply-fence.js';
import type { ReplyEvent } from './stream-events.js';

const start = (attempt: number, seq = 0): ReplyEvent => ({
  type: 'start',
  attempt,
  seq,
  promptTokens: 3,
  resumed: attempt > 1,
});
const delta = (attempt: number, seq: number, text: string, tokens?: number): ReplyEvent => ({
  type: 'delta',
  attempt,
  seq,
  text,
  ...(tokens === undefined ? {} : { tokens }),
});

describe('ReplyFence', () => {
  it('drops events of an attempt once a later one has started, and repeated seqs', () => {
    const fence = new ReplyFence();
    const events = [start(1), delta(1, 1, 'a'), delta(1, 1, 'a'), start(2), delta(1, 2, 'late'), delta(2, 1, 'b')];
    expect(events.map((e) => fence.accept(e))).toEqual([true, true, false, true, false, true]);
  });

  it('calls a seq beyond the next one a gap, as it is an attempt that does not start at 0', () => {
    const fence = new ReplyFence();
    const events = [start(1), delta(1, 1, 'a'), delta(1, 3, 'c'), delta(1, 4, 'd'), delta(2, 2, 'x')];
    expect(events.map((e) => fence.verdict(e))).toEqual(['accept', 'accept', 'gap', 'accept', 'gap']);
  });

  it('replays the text a client was shown across a restart', () => {
    const events = [
      start(1),
      delta(1, 1, 'Hel', 2),
      delta(1, 2, 'lo', 3),
      start(2),
      delta(1, 3, ' stale', 5),
      delta(2, 1, ' world', 4),
    ];
    // The tokens are the count the last accepted delta carries: what generating the text cost, late events not included.
    expect(replayReply(events)).toEqual({ text: 'Hello world', tokens: 4, ended: false });
    expect(
      replayReply([
        ...events,
        { type: 'end', attempt: 2, seq: 2, finishReason: 'stop', usage: { promptTokens: 3, completionTokens: 4 } },
      ]).ended,
    ).toBe(true);
  });
});
