import { GbnfBuilder, gbnfLiteral, repeat, seq } from './gbnf.js';
import { gbnfClass, Pattern, writable } from './pattern-grammar.js';

/** A GBNF expression (safe to place in a sequence) and the most bytes it can match. */
export interface Piece {
  expr: string;
  max: number;
}

/** Characters JSON writes escaped, as they stand in a JSON string. */
const ESCAPED: ReadonlyMap<number, string> = new Map([
  [0x22, '\\"'],
  [0x5c, '\\\\'],
  [0x09, '\\t'],
  [0x0a, '\\n'],
  [0x0d, '\\r'],
]);

/** One character of a set inside a JSON string: a class of those written as they are, or the escape of the others. */
export function jsonChars(chars: readonly boolean[]): Piece {
  const plain = chars.map((on, c) => on && !ESCAPED.has(c));
  const escapes = [...ESCAPED].filter(([c]) => chars[c]).map(([, json]) => gbnfLiteral(json));
  const options = [...(plain.some(Boolean) ? [gbnfClass(plain)] : []), ...escapes];
  if (options.length === 1) return { expr: options[0]!, max: escapes.length ? 2 : 1 };
  return { expr: `(${options.join(' | ')})`, max: escapes.length ? 2 : 1 };
}

/**
 * A repeated piece as one symbol: llama.cpp copies a repeated group's own rules once per repetition
 * (and refuses a grammar past a few thousand), where a rule's name costs nothing to repeat.
 */
export function repeatable(expr: string, gbnf: GbnfBuilder): string {
  return /^\[[^\]]*\]$|^[a-z][a-z0-9-]*$/.test(expr) ? expr : gbnf.rule('pattern-part', expr);
}

/** A pattern's matches inside a JSON string (ASCII characters, escaped where JSON needs); unbounded repeats stop at `chars`. */
export function patternPiece(p: Pattern, chars: number, gbnf: GbnfBuilder): Piece {
  switch (p.t) {
    case 'seq': {
      const items = p.items.map((i) => patternPiece(i, chars, gbnf));
      return { expr: seq(...items.map((i) => i.expr)), max: items.reduce((n, i) => n + i.max, 0) };
    }
    case 'alt': {
      const options = p.options.filter(writable).map((o) => patternPiece(o, chars, gbnf));
      return {
        expr: `(${options.map((o) => o.expr || '""').join(' | ')})`,
        max: Math.max(...options.map((o) => o.max)),
      };
    }
    case 'set':
      return jsonChars(p.chars);
    case 'rep': {
      if (!writable(p.item)) return { expr: '', max: 0 };
      const item = patternPiece(p.item, chars, gbnf);
      const most = Math.min(p.max, Math.max(p.min, chars));
      if (most === 0 || item.expr === '') return { expr: '', max: 0 };
      return { expr: repeat(repeatable(item.expr, gbnf), p.min, most), max: most * item.max };
    }
  }
}
