import { describe, expect, it } from '@jest/globals';
import { ToolCallIndexes, type UpstreamCallDelta } from './tool-call-indexes.js';

const number = (pieces: UpstreamCallDelta[]) => {
  const indexes = new ToolCallIndexes();
  return pieces.map((p) => indexes.next(p));
};

describe('ToolCallIndexes', () => {
  it('keeps numbered calls as they are, with the id and name on each call’s first piece only', () => {
    expect(
      number([
        { index: 0, id: 'c1', name: 'f', arguments: '' },
        { index: 0, arguments: '{"a":' },
        { index: 1, id: 'c2', name: 'g', arguments: '' },
        { index: 1, arguments: '{}' },
        { index: 0, arguments: '1}' },
      ]),
    ).toEqual([
      { index: 0, id: 'c1', name: 'f', arguments: '' },
      { index: 0, arguments: '{"a":' },
      { index: 1, id: 'c2', name: 'g', arguments: '' },
      { index: 1, arguments: '{}' },
      { index: 0, arguments: '1}' },
    ]);
  });

  it('numbers calls from 0 in the order they start, whatever numbers the upstream gives them', () => {
    const pieces = number([
      { index: 3, id: 'c1', name: 'f', arguments: '{}' },
      { index: 7, id: 'c2', name: 'g', arguments: '{' },
      { index: 7, arguments: '}' },
    ]);
    expect(pieces.map((p) => p.index)).toEqual([0, 1, 1]);
  });

  it('tells calls apart by id where the upstream leaves index out or gives every call index 0', () => {
    expect(
      number([
        { id: 'c1', name: 'f', arguments: '{"a"' },
        { arguments: ':1}' },
        { id: 'c2', name: 'g', arguments: '{}' },
      ]).map((p) => [p.index, p.id]),
    ).toEqual([
      [0, 'c1'],
      [0, undefined],
      [1, 'c2'],
    ]);
    expect(
      number([
        { index: 0, id: 'c1', name: 'f', arguments: '{}' },
        { index: 0, id: 'c1', arguments: '' },
        { index: 0, id: 'c2', name: 'g', arguments: '{}' },
      ]).map((p) => p.index),
    ).toEqual([0, 0, 1]);
  });

  it('gives a call the upstream sent without an id one of its own', () => {
    const [first, more, second] = number([
      { index: 0, name: 'f', arguments: '{' },
      { index: 0, arguments: '}' },
      { index: 1, name: 'g', arguments: '{}' },
    ]);
    expect(first!.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(more!.id).toBeUndefined();
    expect(second!.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(second!.id).not.toBe(first!.id);
  });
});
