import { BatchPlan, PlanBuilder } from './batch-plan.js';

/** Adds lines 1… with the given prefix keys (and repeat keys, where given) to a builder. */
function plan(lines: Array<[prefix: string, repeat?: string]>, fold = true): BatchPlan {
  const builder = new PlanBuilder(fold);
  lines.forEach(([prefix, repeat], i) => builder.add(i + 1, `c${i + 1}`, prefix, repeat ?? null));
  return builder.build();
}

/** Every line in the order the plan feeds it, by position. */
function order(p: BatchPlan, total: number): number[] {
  const fed: number[] = [];
  p.steps.forEach((_, step) => {
    for (let line = 1; line <= total; line++) if (p.stepOf(line) === step) fed.push(line);
  });
  return fed;
}

describe('BatchPlan', () => {
  it('feeds the lines of each large group together, groups in the order they first appear, each in file order', () => {
    const keys = ['A', 'B', 'A', 'C', 'B', 'A', 'B', 'C', 'A', 'C', 'B', 'C'];
    const p = plan(keys.map((k) => [k]));
    expect(p.steps.map((s) => [s.key, s.lines])).toEqual([
      ['A', 4],
      ['B', 4],
      ['C', 4],
    ]);
    expect(order(p, keys.length)).toEqual([1, 3, 6, 9, 2, 5, 7, 11, 4, 8, 10, 12]);
    expect(p.summary()).toEqual({ groups: 3, steps: 3, folded: 0 });
  });

  it('packs the small groups into one last step, in file order', () => {
    const keys = ['x1', 'A', 'x2', 'A', 'x3', 'A', 'A', 'x1'];
    const p = plan(keys.map((k) => [k]));
    expect(p.steps.map((s) => [s.key, s.lines])).toEqual([
      ['A', 4],
      ['packed', 4],
    ]);
    expect(order(p, keys.length)).toEqual([2, 4, 6, 7, 1, 3, 5, 8]);
  });

  it('folds a repeat into the first line with its key: it is fed by no step and answered with that line', () => {
    const p = plan([['A', 'r1'], ['A', 'r2'], ['A', 'r1'], ['A'], ['A', 'r1'], ['A']]);
    expect(p.stepOf(3)).toBeNull();
    expect(p.stepOf(5)).toBeNull();
    expect(p.repeatsOf(1)).toEqual([
      { line: 3, customId: 'c3' },
      { line: 5, customId: 'c5' },
    ]);
    expect(p.repeatsOf(2)).toEqual([]);
    expect(p.planned).toBe(4);
    expect(p.summary().folded).toBe(2);
  });

  it('folds nothing when folding is off', () => {
    const p = plan(
      [
        ['A', 'r1'],
        ['A', 'r1'],
      ],
      false,
    );
    expect(p.planned).toBe(2);
    expect(p.repeatsOf(1)).toEqual([]);
  });

  it('locates a position: the step it lies in and how many lines of that step come before it', () => {
    const p = plan(['A', 'B', 'A', 'B', 'A', 'B', 'A', 'B'].map((k) => [k]));
    expect(p.locate(0)).toEqual({ step: 0, skip: 0 });
    expect(p.locate(3)).toEqual({ step: 0, skip: 3 });
    expect(p.locate(4)).toEqual({ step: 1, skip: 0 });
    expect(p.locate(6)).toEqual({ step: 1, skip: 2 });
    expect(p.locate(8)).toEqual({ step: 2, skip: 0 });
    expect(p.startOf(1)).toBe(4);
  });

  it('reads back from its text as it was written', () => {
    const p = plan([['A', 'r'], ['A'], ['B'], ['A', 'r'], ['A'], ['B'], ['A'], ['B'], ['B']]);
    const read = BatchPlan.parse(p.serialize());
    expect(read.steps).toEqual(p.steps);
    expect(order(read, 9)).toEqual(order(p, 9));
    expect(read.repeatsOf(1)).toEqual([{ line: 4, customId: 'c4' }]);
    expect(read.summary()).toEqual(p.summary());
  });
});
