import { Prng } from './prng.js';

/** GPT-2's reversible byte → printable-unicode mapping, which llama.cpp's gpt2 tokenizer expects. */
export function bytesToUnicode(): string[] {
  const printable: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const map: string[] = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    map[b] = String.fromCodePoint(printable.includes(b) ? b : 256 + extra++);
  }
  return map;
}

export const SPECIAL_TOKENS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'] as const;

export interface ByteLevelVocab {
  tokens: string[];
  /** 1 = normal, 3 = control, 4 = user-defined (llama_token_type). */
  tokenTypes: number[];
  merges: string[];
  specialIds: Record<(typeof SPECIAL_TOKENS)[number], number>;
}

const SPACE = 'Ġ';
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const MAX_TOKEN_CHARS = 10;

/**
 * A byte-level BPE vocabulary: all 256 byte tokens, then `size - 256 - specials`
 * merged word pieces picked by a seeded PRNG, then the ChatML control tokens.
 * Every merge joins two tokens that already exist, so the merge table is valid BPE.
 */
export function buildByteLevelVocab(size: number, seed: number, extraTokens: readonly string[] = []): ByteLevelVocab {
  const byteTokens = bytesToUnicode();
  const tokens = [...byteTokens];
  const seen = new Set(tokens);
  const merges: string[] = [];
  const pieces: string[] = [...LETTERS];
  const starters: string[] = [];
  const rng = new Prng(seed);
  const target = size - SPECIAL_TOKENS.length - extraTokens.length;

  const add = (left: string, right: string): void => {
    const joined = left + right;
    if (joined.length > MAX_TOKEN_CHARS || seen.has(joined)) return;
    seen.add(joined);
    tokens.push(joined);
    merges.push(`${left} ${right}`);
    (joined.startsWith(SPACE) ? starters : pieces).push(joined);
  };

  for (const l of LETTERS) if (tokens.length < target) add(SPACE, l);
  let guard = 0;
  while (tokens.length < target) {
    if (++guard > target * 50) throw new Error(`could not build a vocabulary of ${size} tokens`);
    const useStarter = starters.length > 0 && rng.next() < 0.5;
    const left = useStarter ? starters[rng.int(starters.length)] : pieces[rng.int(pieces.length)];
    add(left, pieces[rng.int(Math.min(pieces.length, 26 + Math.floor(pieces.length / 4)))]);
  }

  const tokenTypes = tokens.map(() => 1);
  // Whole-word tokens such as <think>: user-defined (4), so the tokenizer keeps them in one piece.
  for (const extra of extraTokens) {
    tokens.push(extra);
    tokenTypes.push(4);
  }
  const specialIds = {} as ByteLevelVocab['specialIds'];
  for (const special of SPECIAL_TOKENS) {
    specialIds[special] = tokens.length;
    tokens.push(special);
    tokenTypes.push(3);
  }
  return { tokens, tokenTypes, merges, specialIds };
}
