import { describe, expect, it } from '@jest/globals';
import { BUDGET_FLOOR, RoundBudget } from './round-budget.js';

const streamingMs = 120;
const roundMs = 480;

describe('RoundBudget', () => {
  it('gives the whole batch until a round was measured, then what fits a round', () => {
    const budget = new RoundBudget(512, { streamingMs, roundMs });
    expect(budget.tokens(false)).toBe(512);
    // Nothing measured yet while streaming: a small chunk.
    expect(budget.tokens(true)).toBe(BUDGET_FLOOR);
    // 0.5 ms a token, no fixed part known: 960 tokens fit a round, at most the batch; 240 (224) while streaming.
    budget.measured(256, 128);
    expect(budget.tokens(false)).toBe(512);
    expect(budget.tokens(true)).toBe(224);
  });

  it('takes the fixed part of a round from rounds of a few tokens, and the part per token net of it', () => {
    const budget = new RoundBudget(512, { streamingMs, roundMs });
    // Four streams' next tokens: 20 ms, the fixed part.
    for (let i = 0; i < 20; i++) budget.measured(4, 20);
    // A round with a chunk: 128 tokens in 84 ms is 0.5 ms a token beyond the fixed 20, not 0.66.
    budget.measured(128, 84);
    // (120 - 20) / 0.5 = 200 tokens while streaming, 192 in steps; (480 - 20) / 0.5 = 920, the batch.
    expect(budget.tokens(true)).toBe(192);
    expect(budget.tokens(false)).toBe(512);
  });

  it('does not shrink round after round when short rounds carry the fixed part', () => {
    const budget = new RoundBudget(512, { streamingMs, roundMs });
    const fixed = 30;
    const perToken = 0.25;
    let size = budget.tokens(true);
    for (let round = 0; round < 50; round++) {
      budget.measured(3, fixed + 3 * perToken);
      budget.measured(size, fixed + size * perToken);
      size = budget.tokens(true);
    }
    // (120 - 30) / 0.25 = 360 tokens fit; the budget settles at 352, not at the floor.
    expect(size).toBe(352);
  });

  it('never goes below its floor nor above the batch', () => {
    const budget = new RoundBudget(512, { streamingMs, roundMs });
    budget.measured(128, 6400);
    expect(budget.tokens(true)).toBe(BUDGET_FLOOR);
    expect(budget.tokens(false)).toBe(BUDGET_FLOOR);
    for (let i = 0; i < 20; i++) budget.measured(512, 51.2);
    expect(budget.tokens(true)).toBe(512);
    expect(budget.tokens(false)).toBe(512);
  });
});
