import { describe, expect, it } from '@jest/globals';
import { LockstepScheduler, type Stepper } from './lockstep-scheduler.js';

/** Steps started in one synchronous run share an epoch: the epoch moves on at the next microtask. */
let epoch = 0;
let epochEnding = false;
function currentEpoch(): number {
  if (!epochEnding) {
    epochEnding = true;
    queueMicrotask(() => {
      epoch++;
      epochEnding = false;
    });
  }
  return epoch;
}

/** Every step start across all fakes, as [epoch, order]: shows the order within a round. */
const starts: [number, number][] = [];

class FakeGeneration implements Stepper {
  readonly epochs: number[] = [];
  readonly done: Promise<void>;
  private finish!: () => void;

  constructor(
    private readonly steps: number,
    private readonly delayMs: number,
    private readonly failAt = -1,
    readonly order = 0,
  ) {
    this.done = new Promise((r) => (this.finish = r));
  }

  async step(): Promise<boolean> {
    this.epochs.push(currentEpoch());
    // First steps (prompts) run on their own, in start order; only the rounds after them are ordered.
    if (this.epochs.length > 1) starts.push([this.epochs.at(-1)!, this.order]);
    await new Promise((r) => setTimeout(r, this.delayMs));
    if (this.epochs.length === this.failAt) {
      this.finish();
      throw new Error('step failed');
    }
    const more = this.epochs.length < this.steps;
    if (!more) this.finish();
    return more;
  }
}

describe('LockstepScheduler', () => {
  it('starts the steps of every running generation together, whatever their speed', async () => {
    const scheduler = new LockstepScheduler();
    const fast = new FakeGeneration(20, 1);
    const slow = new FakeGeneration(6, 8);
    scheduler.start(fast);
    scheduler.start(slow);
    await Promise.all([fast.done, slow.done]);
    // After its own first (prompt) step, every step of the slow one starts in a round with the fast one,
    // which therefore waits for it instead of running ahead.
    const shared = slow.epochs.slice(1);
    expect(shared).toHaveLength(5);
    for (const e of shared) expect(fast.epochs).toContain(e);
    expect(new Set(fast.epochs).size).toBe(20);
  });

  it('lets a generation join between rounds and drops finished or failed ones', async () => {
    const scheduler = new LockstepScheduler();
    const long = new FakeGeneration(12, 2);
    const short = new FakeGeneration(3, 2);
    const failing = new FakeGeneration(10, 2, 4);
    scheduler.start(long);
    await new Promise((r) => setTimeout(r, 10));
    scheduler.start(short);
    scheduler.start(failing);
    await Promise.all([long.done, short.done, failing.done]);
    expect(short.epochs).toHaveLength(3);
    expect(failing.epochs).toHaveLength(4);
    for (const e of short.epochs.slice(1)) expect(long.epochs).toContain(e);
    await new Promise((r) => setTimeout(r, 10));
    expect(scheduler.size).toBe(0);
  });

  it('steps the running generations in their order, whatever order they joined in', async () => {
    const scheduler = new LockstepScheduler();
    starts.length = 0;
    const generations = [3, 0, 2, 1].map((order) => new FakeGeneration(6, 1 + order, -1, order));
    for (const g of generations) scheduler.start(g);
    await Promise.all(generations.map((g) => g.done));
    const rounds = new Map<number, number[]>();
    for (const [e, order] of starts) rounds.set(e, [...(rounds.get(e) ?? []), order]);
    const full = [...rounds.values()].filter((r) => r.length === 4);
    expect(full.length).toBeGreaterThan(0);
    for (const round of full) expect(round).toEqual([0, 1, 2, 3]);
  });
});
