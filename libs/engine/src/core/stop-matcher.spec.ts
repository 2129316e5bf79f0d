import { describe, expect, it } from '@jest/globals';
import { requestedStops, StopMatcher } from './stop-matcher.js';

const run = (stops: string[], pieces: string[]) => {
  const m = new StopMatcher(stops);
  let out = '';
  for (const p of pieces) {
    const r = m.push(p);
    out += r.text;
    if (r.stopped) return { out, stop: r.matched };
  }
  return { out: out + m.flush(), stop: null };
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
    expect(m.push('Dmore')).toEqual({ text: '', stopped: true, matched: 'END' });
  });

  it('releases held text once it turns out not to be a stop string', () => {
    expect(run(['END'], ['a E', 'Nx', 'y'])).toEqual({ out: 'a ENxy', stop: null });
    expect(run(['END'], ['a E'])).toEqual({ out: 'a E', stop: null });
  });

  it('stops at the earliest of several stop strings, and names the one it stopped at', () => {
    expect(run(['zz', 'b'], ['aab', 'zz'])).toEqual({ out: 'aa', stop: 'b' });
    expect(run(['\n\n', 'x'], ['one\n', '\ntwo x'])).toEqual({ out: 'one', stop: '\n\n' });
    // Two starting at the same place, both complete: the first listed.
    expect(run(['ab', 'abc'], ['xabcd'])).toEqual({ out: 'x', stop: 'ab' });
    expect(run(['abc', 'ab'], ['xabcd'])).toEqual({ out: 'x', stop: 'abc' });
  });
});

describe('requestedStops', () => {
  it("reports a choice's stop string only when the request asked for it, and nothing when none ended on one", () => {
    expect(requestedStops(['END', undefined, '<|im_end|>'], ['END'])).toEqual({ stopSequences: ['END', null, null] });
    expect(requestedStops(['<|im_end|>'], ['END'])).toEqual({});
    expect(requestedStops([undefined, undefined], [])).toEqual({});
    // The request may name a template's end marker itself: then it is the stop sequence that matched.
    expect(requestedStops(['<|im_end|>'], ['<|im_end|>'])).toEqual({ stopSequences: ['<|im_end|>'] });
  });
});
