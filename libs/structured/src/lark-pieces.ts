import { GbnfBuilder, gbnfLiteral, repeat, seq } from './gbnf.js';
import type { LarkExpr } from './lark-grammar.js';
import type { Pattern } from './pattern-grammar.js';
import { patternPiece, repeatable, type Piece } from './pattern-piece.js';
import { asciiJson } from './schema-node.js';

/**
 * A Lark grammar's texts as the inside of a JSON string: each character escaped as JSON needs, non-ASCII
 * literals as `\u` escapes. Unbounded repeats stop at a count, like a free string's length (see `cap`),
 * so the longest text is bounded, and the ladder of caps fits it to the reply's budget.
 */
export class LarkPieces {
  private readonly memo = new Map<LarkExpr, Piece>();

  constructor(
    private readonly gbnf: GbnfBuilder,
    private readonly caps: { chars: number; items: number },
  ) {}

  piece(e: LarkExpr): Piece {
    let piece = this.memo.get(e);
    if (!piece) {
      piece = this.build(e);
      this.memo.set(e, piece);
    }
    return piece;
  }

  private build(e: LarkExpr): Piece {
    switch (e.t) {
      case 'text': {
        const json = asciiJson(e.text).slice(1, -1);
        return { expr: json ? gbnfLiteral(json) : '', max: json.length };
      }
      case 'pattern':
        return patternPiece(e.pattern, this.caps.chars, this.gbnf);
      case 'seq': {
        const items = e.items.map((i) => this.piece(i));
        return { expr: seq(...items.map((i) => i.expr)), max: items.reduce((n, i) => n + i.max, 0) };
      }
      case 'alt': {
        const options = e.options.map((o) => this.piece(o));
        return {
          expr: `(${[...new Set(options.map((o) => o.expr || '""'))].join(' | ')})`,
          max: Math.max(...options.map((o) => o.max)),
        };
      }
      case 'rep': {
        const item = this.piece(e.item);
        const cap = this.cap(e.item);
        const most = Math.min(e.max, Math.max(e.min, cap));
        if (most === 0 || item.expr === '') return { expr: '', max: 0 };
        return { expr: repeat(repeatable(item.expr, this.gbnf), e.min, most), max: most * item.max };
      }
      case 'rule': {
        const body = this.piece(e.body);
        return { expr: this.gbnf.rule(`lark-${e.name}`, body.expr || '""'), max: body.max };
      }
    }
  }

  /**
   * Where an unbounded repeat stops. Counts multiply down nested repeats, so the longest text grows as
   * their product: a patch's few files get many lines each (an outer repeat a quarter of the items cap,
   * an inner one four times it), and a line its characters (a repeat of a character or an escape pair).
   */
  private cap(item: LarkExpr): number {
    if (longest(item) <= 2) return this.caps.chars;
    return repeats(item) ? Math.max(1, this.caps.items >> 2) : this.caps.items * 4;
  }
}

/** Rules are shared, and a rule used twice in each of a chain of rules must not be walked twice as often. */
const longestOf = new WeakMap<LarkExpr, number>();
const repeatsOf = new WeakMap<LarkExpr, boolean>();

/** The most characters a text of the expression has (Infinity past an unbounded repeat). */
function longest(e: LarkExpr): number {
  let n = longestOf.get(e);
  if (n === undefined) longestOf.set(e, (n = longestOnce(e)));
  return n;
}

function longestOnce(e: LarkExpr): number {
  switch (e.t) {
    case 'text':
      return e.text.length;
    case 'pattern':
      return patternLongest(e.pattern);
    case 'seq':
      return e.items.reduce((n, i) => n + longest(i), 0);
    case 'alt':
      return Math.max(...e.options.map(longest));
    case 'rep':
      return e.max * longest(e.item);
    case 'rule':
      return longest(e.body);
  }
}

function patternLongest(p: Pattern): number {
  switch (p.t) {
    case 'seq':
      return p.items.reduce((n, i) => n + patternLongest(i), 0);
    case 'alt':
      return Math.max(...p.options.map(patternLongest));
    case 'set':
      return 1;
    case 'rep':
      return p.max * patternLongest(p.item);
  }
}

/** Whether the expression holds an unbounded repeat of more than a character or two (a line's, not a name's). */
function repeats(e: LarkExpr): boolean {
  let r = repeatsOf.get(e);
  if (r === undefined) repeatsOf.set(e, (r = repeatsOnce(e)));
  return r;
}

function repeatsOnce(e: LarkExpr): boolean {
  switch (e.t) {
    case 'text':
    case 'pattern':
      return false;
    case 'seq':
      return e.items.some(repeats);
    case 'alt':
      return e.options.some(repeats);
    case 'rep':
      return (e.max === Infinity && longest(e.item) > 2) || repeats(e.item);
    case 'rule':
      return repeats(e.body);
  }
}
