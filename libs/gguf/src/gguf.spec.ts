import { describe, it, expect, beforeAll } from '@jest/globals';
import { SPECIAL_TOKENS, buildByteLevelVocab, bytesToUnicode, type ByteLevelVocab } from './byte-level-vocab.js';
import { fromHalf, toHalf } from './half-float.js';

describe('buildByteLevelVocab', () => {
  let vocab: ByteLevelVocab;
  beforeAll(() => {
    vocab = buildByteLevelVocab(2048, 1);
  });

  it('has exactly the requested number of distinct tokens, with a type for each', () => {
    expect(vocab.tokens).toHaveLength(2048);
    expect(new Set(vocab.tokens).size).toBe(2048);
    expect(vocab.tokenTypes).toHaveLength(2048);
  });

  it('starts with the 256 byte tokens, each one character', () => {
    const bytes = bytesToUnicode();
    expect(new Set(bytes).size).toBe(256);
    expect(vocab.tokens.slice(0, 256)).toEqual(bytes);
    for (const t of bytes) expect([...t]).toHaveLength(1);
    // GPT-2's mapping keeps printable ASCII and moves the space to 'Ġ'.
    expect(bytes[0x41]).toBe('A');
    expect(bytes[0x20]).toBe('Ġ');
  });

  it('has one merge per merged token, each joining two earlier tokens into a present one', () => {
    expect(vocab.merges).toHaveLength(2048 - 256 - SPECIAL_TOKENS.length);
    const index = new Map(vocab.tokens.map((t, i) => [t, i]));
    const invalid = vocab.merges.filter((merge) => {
      const parts = merge.split(' ');
      if (parts.length !== 2) return true;
      const [a, b] = parts;
      const joined = index.get(a + b);
      const left = index.get(a);
      const right = index.get(b);
      return joined === undefined || left === undefined || right === undefined || left >= joined || right >= joined;
    });
    expect(invalid).toEqual([]);
    // Merges are listed in the order their tokens were added, right after the byte tokens.
    expect(vocab.merges.map((m) => m.replace(' ', ''))).toEqual(vocab.tokens.slice(256, -SPECIAL_TOKENS.length));
  });

  it('ends with the special tokens, typed as control, and records their ids', () => {
    const n = SPECIAL_TOKENS.length;
    expect(n).toBe(3);
    expect(vocab.tokens.slice(-n)).toEqual([...SPECIAL_TOKENS]);
    expect(vocab.tokenTypes.slice(-n)).toEqual([3, 3, 3]);
    expect(vocab.tokenTypes.slice(0, -n).every((t) => t === 1)).toBe(true);
    for (const special of SPECIAL_TOKENS) expect(vocab.tokens[vocab.specialIds[special]]).toBe(special);
  });

  it('is the same for the same seed and differs for another', () => {
    expect(buildByteLevelVocab(2048, 1)).toEqual(vocab);
    expect(buildByteLevelVocab(2048, 2).tokens).not.toEqual(vocab.tokens);
  });
});

describe('toHalf / fromHalf', () => {
  it.each([0, 1, -2, 0.5, 65504, -65504, 2 ** -14, 1 + 2 ** -10])('round-trips %p exactly', (value) => {
    expect(fromHalf(toHalf(value))).toBe(value);
  });

  it('encodes well-known bit patterns', () => {
    expect(toHalf(1)).toBe(0x3c00);
    expect(toHalf(-2)).toBe(0xc000);
    expect(toHalf(65504)).toBe(0x7bff);
    expect(toHalf(2 ** -24)).toBe(0x0001); // smallest subnormal
    expect(toHalf(-0)).toBe(0x8000);
  });

  it('handles subnormals to within half of their step', () => {
    const step = 2 ** -24;
    for (const value of [2 ** -24, 3 * 2 ** -24, 1e-6, 5e-5, -2e-5, 6.0e-5]) {
      const back = fromHalf(toHalf(value));
      expect(Math.abs(back - value)).toBeLessThanOrEqual(step / 2);
      expect(Math.sign(back)).toBe(Math.sign(value));
    }
  });

  it('rounds normal values to nearest, within half a unit in the last place', () => {
    for (const value of [0.1, 3.14159, -123.456, 1000.3]) {
      const ulp = 2 ** (Math.floor(Math.log2(Math.abs(value))) - 10);
      expect(Math.abs(fromHalf(toHalf(value)) - value)).toBeLessThanOrEqual(ulp / 2);
    }
  });

  it('overflows to infinity and keeps NaN', () => {
    expect(fromHalf(toHalf(1e6))).toBe(Infinity);
    expect(fromHalf(toHalf(-1e6))).toBe(-Infinity);
    expect(fromHalf(toHalf(NaN))).toBeNaN();
  });
});
