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

  describe('where the engine signals the end of its rounds', () => {
    /** One signalled round: each of `replies` outputs in its own turn (as the samples come back), then the signal. */
    const signalledRound = (ctx: ReturnType<typeof setup>, replies: number, ms: number) => {
      for (let i = 0; i < replies; i++) {
        ctx.cadence.added(false);
        ctx.clock.endTurn();
      }
      ctx.cadence.roundEnded();
      ctx.clock.advance(ms);
    };
    /** A cadence whose engine has signalled a round already (the worker's warm-up generation does, before any job). */
    const signalling = () => {
      const ctx = setup();
      ctx.cadence.roundEnded();
      ctx.clock.advance(10);
      return ctx;
    };

    it('writes two whole rounds at once, however many turns a round takes', () => {
      const ctx = signalling();
      for (let i = 0; i < 20; i++) signalledRound(ctx, 8, 10);
      // Rounds end at 10, 20, ...: each write at the end of the round after the oldest it carries.
      expect(ctx.writes).toEqual(Array.from({ length: 10 }, (_, i) => 20 + 20 * i));
    });

    it('still writes an end at the end of its own turn', () => {
      const ctx = signalling();
      signalledRound(ctx, 3, 10);
      ctx.cadence.added(true);
      ctx.clock.endTurn();
      expect(ctx.writes).toEqual([20]);
    });

    it('writes what no next round follows within about a round', () => {
      const ctx = signalling();
      for (let i = 0; i < 4; i++) signalledRound(ctx, 2, 10);
      expect(ctx.writes.length).toBe(2);
      signalledRound(ctx, 2, 0); // the last round: its events wait for a round that does not come
      ctx.clock.advance(14);
      expect(ctx.writes.length).toBe(2);
      ctx.clock.advance(2);
      expect(ctx.writes.length).toBe(3);
    });

    it('writes the events of an engine without rounds beside one with them within about a round', () => {
      const ctx = signalling();
      for (let i = 0; i < 4; i++) signalledRound(ctx, 2, 10);
      const before = ctx.writes.length;
      ctx.cadence.added(false); // a llama-server reply's piece, between two rounds
      ctx.clock.endTurn();
      ctx.clock.advance(16);
      expect(ctx.writes.length).toBe(before + 1);
    });
  });
});
