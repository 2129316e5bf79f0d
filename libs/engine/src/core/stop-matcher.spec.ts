import { describe, expect, it } from '@jest/globals';
import { StopMatcher } from './stop-matcher.js';

const run = (stops: string[], pieces: string[]) => {
  const m = new StopMatcher(stops);
  let out = '';
  for (const p of pieces) {
    const r = m.push(p);
    out += r.text;
    if (r.stopped) return { out, stopped: true };
  }
  return { out: out + m.flush(), stopped: false };
};

describe('StopMatcher', () => {
  it('passes text straight through without stop strings', () => {
    const m = new StopMatcher([]);
    expect(m.push('abc')).toEqual({ text: 'abc', stopped: false });
  });

  it('cuts before a stop string split across pieces and never sends part of it', () => {
    const m = new StopMatcher(['END']);
    expect(m.push('hello E')).toEqual({ text: 'hello ', stopped: false });
    expect(m.push('N')).toEqual({ text: '', stopped: false });
    expect(m.push('Dmore')).toEqual({ text: '', stopped: true });
  });

  it('releases held text once it turns out not to be a stop string', () => {
    expect(run(['END'], ['a E', 'Nx', 'y'])).toEqual({ out: 'a ENxy', stopped: false });
    expect(run(['END'], ['a E'])).toEqual({ out: 'a E', stopped: false });
  });

  it('stops at the earliest of several stop strings', () => {
    expect(run(['zz', 'b'], ['aab', 'zz'])).toEqual({ out: 'aa', stopped: true });
    expect(run(['\n\n', 'x'], ['one\n', '\ntwo x'])).toEqual({ out: 'one', stopped: true });
  });
});
