import { describe, expect, it } from '@jest/globals';
import { BacklogGauge } from './backlog-gauge.js';

describe('BacklogGauge', () => {
  const setup = (backlog: number[]) => {
    let now = 1000;
    const reads: string[] = [];
    const gauge = new BacklogGauge(
      async (deployment) => {
        reads.push(deployment);
        return backlog.shift() ?? 0;
      },
      100,
      () => now,
    );
    return { gauge, reads, advance: (ms: number) => (now += ms) };
  };

  it('answers from a recent reading, counting what it admitted since', async () => {
    const { gauge, reads } = setup([0]);
    for (let i = 0; i < 9; i++) expect(await gauge.admit('a', 10)).toEqual({ admitted: true });
    expect(reads).toEqual(['a']);
  });

  it('reads afresh near the limit and refuses only on a fresh reading', async () => {
    const { gauge, reads } = setup([0, 1, 2]);
    expect(await gauge.admit('a', 2)).toEqual({ admitted: true });
    // Estimate 1 + 1 reaches the limit: read again; workers took the first job, so it fits.
    expect(await gauge.admit('a', 2)).toEqual({ admitted: true });
    expect(await gauge.admit('a', 2)).toEqual({ admitted: false, waiting: 2 });
    expect(reads).toEqual(['a', 'a', 'a']);
  });

  it('reads afresh once a reading is older than its age limit, per deployment', async () => {
    const { gauge, reads, advance } = setup([0, 0, 5]);
    await gauge.admit('a', 10);
    await gauge.admit('b', 10);
    advance(100);
    expect(await gauge.admit('a', 10)).toEqual({ admitted: true });
    expect(reads).toEqual(['a', 'b', 'a']);
  });

  it('keeps no reading after a refusal, so the next request reads again', async () => {
    const { gauge, reads } = setup([3, 0]);
    expect(await gauge.admit('a', 3)).toEqual({ admitted: false, waiting: 3 });
    expect(await gauge.admit('a', 3)).toEqual({ admitted: true });
    expect(reads).toEqual(['a', 'a']);
  });
});
