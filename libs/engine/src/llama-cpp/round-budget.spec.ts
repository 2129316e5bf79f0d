import { describe, expect, it } from '@jest/globals';
import { BUDGET_STEP, RoundBudget } from './round-budget.js';

describe('RoundBudget', () => {
  it('gives the whole batch when nothing streams, whatever rounds took', () => {
    const budget = new RoundBudget(512, 120);
    expect(budget.tokens(false)).toBe(512);
    budget.measured(256, 1000);
    expect(budget.tokens(false)).toBe(512);
  });

  it('while replies stream, fits the round in its time at the measured speed, in steps', () => {
    const budget = new RoundBudget(512, 120);
    // Nothing measured yet: a small chunk.
    expect(budget.tokens(true)).toBe(4 * BUDGET_STEP);
    // 1 ms a token: 120 tokens fit, 96 in whole steps.
    budget.measured(256, 256);
    expect(budget.tokens(true)).toBe(96);
    // Faster rounds raise it, never past the batch.
    for (let i = 0; i < 20; i++) budget.measured(512, 51.2);
    expect(budget.tokens(true)).toBe(512);
  });

  it('never goes below one step, and ignores rounds of a few tokens', () => {
    const budget = new RoundBudget(512, 120);
    budget.measured(64, 6400);
    expect(budget.tokens(true)).toBe(BUDGET_STEP);
    // Four streams' tokens alone: no chunk in the round, nothing learnt.
    budget.measured(4, 1);
    expect(budget.tokens(true)).toBe(BUDGET_STEP);
  });
});
