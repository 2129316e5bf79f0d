import { describe, expect, it } from '@jest/globals';
import { TokenText } from './token-text.js';

// A byte-level vocabulary: each token is one byte, as in the generated test models.
const bytes = (text: string) => [...Buffer.from(text, 'utf8')];
const decode = (tokens: readonly number[]) => Buffer.from(tokens).toString('utf8');

describe('TokenText', () => {
  it('streams pieces that join into the text of all tokens, holding split multi-byte characters', () => {
    const text = 'héllo wörld 🙂!';
    const t = new TokenText<number>(decode);
    const pieces = bytes(text).map((b) => t.push(b));
    expect(pieces.join('') + t.flush()).toBe(text);
    expect(pieces.some((p) => p.includes('\uFFFD'))).toBe(false);
    // The emoji's first three bytes produce nothing; the fourth produces the whole character.
    const emoji = bytes('🙂');
    const fresh = new TokenText<number>(decode);
    expect(emoji.map((b) => fresh.push(b))).toEqual(['', '', '', '🙂']);
  });

  it('gives up holding after a character could have ended, and flushes what is left', () => {
    const t = new TokenText<number>(decode);
    const invalid = [0xe2, 0xe2, 0xe2, 0xe2];
    expect(invalid.map((b) => t.push(b)).join('')).toContain('\uFFFD');
    expect(t.push(0xe2)).toBe('');
    expect(t.flush()).toBe('\uFFFD');
  });

  it('hands the detokenizer the tokens that came before each piece', () => {
    const seen: number[][] = [];
    const t = new TokenText<number>((tokens, last) => {
      seen.push([...last]);
      return decode(tokens);
    });
    for (const b of bytes('abc')) t.push(b);
    expect(seen).toEqual([[], [0x61], [0x61, 0x62]]);
  });
});
