import { describe, expect, it } from '@jest/globals';
import { promptOpensThought, ReasoningSplitter } from './reasoning-splitter.js';

function split(pieces: string[], inside: boolean) {
  const s = new ReasoningSplitter(inside);
  let reasoning = '';
  let content = '';
  for (const p of [...pieces.map((x) => s.push(x)), s.flush()]) {
    reasoning += p.reasoning;
    content += p.content;
  }
  return { reasoning, content };
}

describe('ReasoningSplitter', () => {
  it('splits a thought the reply opens itself, whatever the piece boundaries', () => {
    const text = '<think>let me see</think>\n\nThe answer.';
    for (let cut = 0; cut <= text.length; cut++) {
      expect(split([text.slice(0, cut), text.slice(cut)], false)).toEqual({
        reasoning: 'let me see',
        content: 'The answer.',
      });
    }
    expect(split([...text], false)).toEqual({ reasoning: 'let me see', content: 'The answer.' });
  });

  it('starts inside when the prompt opened the thought', () => {
    expect(split(['hmm', '</th', 'ink>ok'], true)).toEqual({ reasoning: 'hmm', content: 'ok' });
    expect(promptOpensThought('<|im_start|>assistant\n<think>\n')).toBe(true);
    expect(promptOpensThought('<think>a</think>b<|im_start|>assistant\n')).toBe(false);
  });

  it('keeps a reply without a thought as content, and an unclosed thought as reasoning', () => {
    expect(split(['Hello <think> there'], false)).toEqual({ reasoning: '', content: 'Hello <think> there' });
    expect(split(['<th'], false)).toEqual({ reasoning: '', content: '<th' });
    expect(split(['still thinking', '</thi'], true)).toEqual({ reasoning: 'still thinking</thi', content: '' });
  });
});
