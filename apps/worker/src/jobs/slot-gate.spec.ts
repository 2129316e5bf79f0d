import { describe, expect, it } from '@jest/globals';
import { SlotGate, type SharedIntake } from './slot-gate.js';

/** As BullMQ's worker starts: its concurrency the deployment's sequences. */
class FakeIntake implements SharedIntake {
  wakes = 0;
  constructor(public concurrency: number) {}

  wake(): void {
    this.wakes++;
  }
}

const gate = (size: number) => {
  const intake = new FakeIntake(size);
  const reports: number[] = [];
  return { intake, reports, gate: new SlotGate(size, intake, (free) => reports.push(free)) };
};

describe('SlotGate', () => {
  it('lets the deployment queue take every sequence while none is routed', () => {
    const { intake, reports } = gate(4);
    expect(intake.concurrency).toBe(4);
    expect(reports).toEqual([4]);
  });

  it('routed jobs hold sequences back from the deployment queue, and give them back when they end', () => {
    const { intake, gate: g } = gate(4);
    expect(g.enterRouted()).toBe(true);
    expect(g.enterRouted()).toBe(true);
    expect(intake.concurrency).toBe(2);
    g.leaveRouted();
    // Raised: the intake is woken so it takes a job now, not when one of its own ends.
    expect(intake.concurrency).toBe(3);
    expect(intake.wakes).toBe(1);
  });

  it('refuses a routed job when every sequence is taken, counting nothing for it', () => {
    const { gate: g, reports } = gate(2);
    g.enterShared();
    g.enterShared();
    expect(g.free).toBe(0);
    expect(g.enterRouted()).toBe(false);
    g.leaveShared();
    expect(g.enterRouted()).toBe(true);
    expect(g.free).toBe(0);
    expect(reports.at(-1)).toBe(0);
  });

  it('never sets a concurrency below one, which BullMQ refuses', () => {
    const { intake, gate: g } = gate(1);
    expect(g.enterRouted()).toBe(true);
    expect(intake.concurrency).toBe(1);
    expect(g.free).toBe(0);
  });
});
