import { gbnfLiteral, repeat, seq } from './gbnf.js';

/** GBNF for the integers from `lo` to `hi` (safe integers), in JSON's form: no leading zeros, `-` for negatives. */
export function integerRange(lo: number, hi: number): string {
  const alts: string[] = [];
  if (lo < 0) alts.push(seq('"-"', `(${naturals(Math.max(1, -hi), -lo)})`));
  if (hi >= 0) alts.push(naturals(Math.max(0, lo), hi));
  return alts.join(' | ');
}

/** Non-negative integers from `lo` to `hi`, split by their number of digits. */
export function naturals(lo: number, hi: number): string {
  const alts: string[] = [];
  for (let len = String(lo).length; len <= String(hi).length; len++) {
    const from = Math.max(lo, len === 1 ? 0 : 10 ** (len - 1));
    const to = Math.min(hi, 10 ** len - 1);
    if (from <= to) alts.push(sameLength(String(from), String(to)));
  }
  return alts.join(' | ');
}

/** Digit strings of one length from `a` to `b`, as a sequence: fixed leading digits, then a split on the first that differs. */
function sameLength(a: string, b: string): string {
  if (a === '') return '';
  if (a === b) return gbnfLiteral(a);
  if (a[0] === b[0]) return seq(gbnfLiteral(a[0]!), sameLength(a.slice(1), b.slice(1)));
  const rest = a.length - 1;
  const digit = (x: number, y: number) => (x === y ? gbnfLiteral(String(x)) : `[${x}-${y}]`);
  const any = repeat('[0-9]', rest, rest);
  const [x, y] = [Number(a[0]), Number(b[0])];
  if (/^0*$/.test(a.slice(1)) && /^9*$/.test(b.slice(1))) return seq(digit(x, y), any);
  const alts = [seq(gbnfLiteral(a[0]!), `(${sameLength(a.slice(1), '9'.repeat(rest))})`)];
  if (y - x > 1) alts.push(seq(digit(x + 1, y - 1), any));
  alts.push(seq(gbnfLiteral(b[0]!), `(${sameLength('0'.repeat(rest), b.slice(1))})`));
  return `(${alts.join(' | ')})`;
}

interface TrieNode {
  end: boolean;
  next: Map<string, TrieNode>;
}

/** A GBNF expression matching exactly the given (ASCII) texts, shaped as a trie of their shared prefixes. */
export function trie(texts: string[]): string {
  const root: TrieNode = { end: false, next: new Map() };
  for (const text of texts) {
    let node = root;
    for (const ch of text) {
      let child = node.next.get(ch);
      if (!child) node.next.set(ch, (child = { end: false, next: new Map() }));
      node = child;
    }
    node.end = true;
  }
  const suffixes = (node: TrieNode): string => {
    const alts: string[] = [];
    for (const [ch, child] of node.next) {
      let text = ch;
      let n = child;
      // Runs without a branch become one literal.
      while (!n.end && n.next.size === 1) {
        const [[c, only]] = n.next;
        text += c;
        n = only;
      }
      alts.push(seq(gbnfLiteral(text), n.next.size ? suffixes(n) : ''));
    }
    const body = alts.length === 1 && !node.end ? alts[0] : `(${alts.join(' | ')})`;
    return node.end ? `${body}?` : body;
  };
  return suffixes(root);
}
