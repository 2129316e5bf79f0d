import { describe, expect, it } from '@jest/globals';
import { FlushCadence, MAX_WAIT_MS, type CadenceClock } from './flush-cadence.js';

/** A clock the test moves: turns end when it says so, timers fire when time passes them. */
class TestClock implements CadenceClock {
  time = 0;
  private turnEnds: Array<() => void> = [];
  private timers: Array<{ at: number; fn: () => void; live: boolean }> = [];
  now = () => this.time;
  afterTurn = (fn: () => void) => void this.turnEnds.push(fn);
  after = (fn: () => void, ms: number) => {
    const timer = { at: this.time + ms, fn, live: true };
    this.timers.push(timer);
    return () => void (timer.live = false);
  };
  endTurn(): void {
    const ends = this.turnEnds;
    this.turnEnds = [];
    ends.forEach((fn) => fn());
  }
  advance(ms: number): void {
    this.time += ms;
    for (const timer of this.timers.filter((t) => t.live && t.at <= this.time)) {
      timer.live = false;
      timer.fn();
    }
  }
}

describe('FlushCadence', () => {
  const setup = () => {
    const clock = new TestClock();
    const writes: number[] = [];
    const cadence = new FlushCadence(() => writes.push(clock.time), clock);
    /** One engine round: `replies` outputs in one turn, then `ms` until the next round. */
    const round = (replies: number, ms: number, urgent = false) => {
      for (let i = 0; i < replies; i++) cadence.added(urgent && i === replies - 1);
      clock.endTurn();
      clock.advance(ms);
    };
    return { clock, writes, cadence, round };
  };

  it("writes a round's events at the end of the next round: one write for every two rounds", () => {
    const { writes, round } = setup();
    for (let i = 0; i < 20; i++) round(8, 10);
    expect(writes.length).toBe(10);
    // Each write comes at the end of a round that followed the oldest one it carries.
    expect(writes).toEqual(Array.from({ length: 10 }, (_, i) => 10 + 20 * i));
  });

  it('writes an end at the end of its own round', () => {
    const { writes, round } = setup();
    round(1, 10);
    round(1, 0, true);
    round(1, 10, true);
    expect(writes).toEqual([10, 10]);
  });

  it('writes what no next round follows within about a round, and never later than MAX_WAIT_MS', () => {
    const { writes, round, clock } = setup();
    for (let i = 0; i < 6; i++) round(2, 10);
    expect(writes.length).toBe(3);
    round(2, 0); // the last round of the replies: nothing follows
    clock.advance(14);
    expect(writes.length).toBe(3);
    clock.advance(2);
    expect(writes.length).toBe(4);
    // After a long idle time, a lone event waits at most MAX_WAIT_MS.
    clock.advance(10_000);
    round(1, 0);
    clock.advance(MAX_WAIT_MS * 1.5 + 1);
    expect(writes.length).toBe(5);
  });
});
