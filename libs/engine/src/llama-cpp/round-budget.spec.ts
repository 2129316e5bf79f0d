import { describe, expect, it } from '@jest/globals';
import { BUDGET_STEP, RoundBudget } from './round-budget.js';

const streamingMs = 120;
const roundMs = 240;

describe('RoundBudget', () => {
  it('gives the whole batch until a round was measured, then what fits a round', () => {
    const budget = new RoundBudget(512, { streamingMs, roundMs });
    expect(budget.tokens(false)).toBe(512);
    // Nothing measured yet while streaming: a small chunk.
    expect(budget.tokens(true)).toBe(4 * BUDGET_STEP);
    // 1 ms a token, no fixed part known: 240 tokens fit a round, 224 in whole steps; 120 (96) while streaming.
    budget.measured(256, 256);
    expect(budget.tokens(false)).toBe(224);
    expect(budget.tokens(true)).toBe(96);
  });

  it('takes the fixed part of a round from rounds of a few tokens, and the part per token net of it', () => {
    const budget = new RoundBudget(512, { streamingMs, roundMs });
    // Four streams' next tokens: 20 ms, the fixed part.
    for (let i = 0; i < 20; i++) budget.measured(4, 20);
    // A round with a chunk: 64 tokens in 84 ms is 1 ms a token beyond the fixed 20, not 1.3.
    budget.measured(64, 84);
    // (120 - 20) / 1 = 100 tokens while streaming, 96 in steps; (240 - 20) / 1 = 220, 192 in steps.
    expect(budget.tokens(true)).toBe(96);
    expect(budget.tokens(false)).toBe(192);
  });

  it('does not shrink round after round when short rounds carry the fixed part', () => {
    const budget = new RoundBudget(512, { streamingMs, roundMs });
    const fixed = 30;
    const perToken = 0.5;
    let size = budget.tokens(true);
    for (let round = 0; round < 50; round++) {
      budget.measured(3, fixed + 3 * perToken);
      budget.measured(size, fixed + size * perToken);
      size = budget.tokens(true);
    }
    // (120 - 30) / 0.5 = 180 tokens fit; the budget settles at 160, not at the floor.
    expect(size).toBe(160);
  });

  it('never goes below one step nor above the batch', () => {
    const budget = new RoundBudget(512, { streamingMs, roundMs });
    budget.measured(64, 6400);
    expect(budget.tokens(true)).toBe(BUDGET_STEP);
    for (let i = 0; i < 20; i++) budget.measured(512, 51.2);
    expect(budget.tokens(true)).toBe(512);
    expect(budget.tokens(false)).toBe(512);
  });
});
