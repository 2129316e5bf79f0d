import { describe, expect, it } from '@jest/globals';
import { loadScript } from '@conveyor/redis';
import { TAKE_OVER_SCRIPT } from './take-over.script.js';

describe('the take-over script', () => {
  it("is registered with the eight queue keys its header names, in BullTakeOver's order", () => {
    expect(loadScript(TAKE_OVER_SCRIPT).numberOfKeys).toBe(8);
  });
});
