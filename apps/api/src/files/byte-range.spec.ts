import { describe, expect, it } from '@jest/globals';
import { parseByteRange } from './byte-range.js';

describe('parseByteRange', () => {
  it.each([
    ['bytes=0-9', { kind: 'part', start: 0, end: 9 }],
    ['bytes=5-5', { kind: 'part', start: 5, end: 5 }],
    ['bytes=90-200', { kind: 'part', start: 90, end: 99 }],
    ['bytes=10-', { kind: 'part', start: 10, end: 99 }],
    ['bytes=-10', { kind: 'part', start: 90, end: 99 }],
    ['bytes=-1000', { kind: 'part', start: 0, end: 99 }],
    [' Bytes=1-2 ', { kind: 'part', start: 1, end: 2 }],
  ])('serves %j of 100 bytes as %j', (header, expected) => {
    expect(parseByteRange(header, 100)).toEqual(expected);
  });

  it.each(['bytes=100-', 'bytes=100-200', 'bytes=-0'])('finds no byte of 100 in %j', (header) => {
    expect(parseByteRange(header, 100)).toEqual({ kind: 'unsatisfiable' });
  });

  it('finds no byte in an empty file', () => {
    expect(parseByteRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(parseByteRange('bytes=-5', 0)).toEqual({ kind: 'unsatisfiable' });
  });

  it.each([undefined, '', 'bytes=-', 'bytes=5-1', 'bytes=0-1,5-6', 'items=0-1', 'bytes=a-b', 'bytes=0x1-2'])(
    'ignores %j: the whole file',
    (header) => {
      expect(parseByteRange(header, 100)).toEqual({ kind: 'whole' });
    },
  );
});
