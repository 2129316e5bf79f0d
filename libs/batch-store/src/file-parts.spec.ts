import { describe, expect, it } from '@jest/globals';
import { assertByteRange, assertPartIndex, partIndexOf, partName, slicesOf } from './file-parts.js';

const parts = [
  { index: 3, size: 6 }, // klmnop
  { index: 0, size: 6 }, // abcdef
  { index: 2, size: 0 },
  { index: 1, size: 4 }, // ghij
];
const shape = (range?: { start: number; end?: number }) =>
  slicesOf(parts, range).map(({ part, start, end }) => [part.index, start, end]);

describe('file parts', () => {
  it('names parts so that names sort in index order, and reads the names back', () => {
    expect(partName(0)).toBe('000000');
    expect(partName(42)).toBe('000042');
    expect(partIndexOf('000042')).toBe(42);
    expect(partIndexOf(partName(1_700_000_000_000))).toBe(1_700_000_000_000);
    for (const other of ['42', 'meta.json', '000001.tmp', 'part-000001.ab12.tmp'])
      expect(partIndexOf(other)).toBeNull();
  });

  it('slices a range out of the parts in index order, leaving empty and untouched parts out', () => {
    expect(shape()).toEqual([
      [0, 0, 5],
      [1, 0, 3],
      [3, 0, 5],
    ]);
    expect(shape({ start: 1, end: 3 })).toEqual([[0, 1, 3]]);
    expect(shape({ start: 4, end: 11 })).toEqual([
      [0, 4, 5],
      [1, 0, 3],
      [3, 0, 1],
    ]);
    expect(shape({ start: 10 })).toEqual([[3, 0, 5]]);
    expect(shape({ start: 15, end: 99 })).toEqual([[3, 5, 5]]);
    expect(shape({ start: 16 })).toEqual([]);
  });

  it('refuses part indexes and ranges that name no bytes', () => {
    for (const index of [-1, 0.5, Number.NaN, Infinity]) expect(() => assertPartIndex(index)).toThrow(RangeError);
    expect(assertPartIndex(7)).toBe(7);
    for (const range of [{ start: -1 }, { start: 2, end: 1 }, { start: 0.5 }, { start: 0, end: Infinity }]) {
      expect(() => assertByteRange(range)).toThrow(RangeError);
    }
    expect(() => assertByteRange({ start: 3, end: 3 })).not.toThrow();
  });
});
