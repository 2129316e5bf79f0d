import { GbnfBuilder, gbnfLiteral, repeat, seq } from './gbnf.js';
import { integerRange, naturals, trie } from './grammar-shapes.js';
import { LarkPieces } from './lark-pieces.js';
import { patternPiece, type Piece } from './pattern-piece.js';
import { ArrayNode, NumberNode, ObjectNode, SchemaNode } from './schema-node.js';
import { FORMAT_GRAMMARS, FORMAT_LENGTHS } from './string-formats.js';

/** Limits on everything the schema leaves open; schema minimums and maximums override them. */
export interface SizeCaps {
  /** Characters in a free string. */
  chars: number;
  /** Items in an array. */
  items: number;
  /** Properties in a free-form object. */
  keys: number;
  /** Digits in the integer part, and separately in the fraction, of a number. */
  digits: number;
  /** Nesting of arrays/objects inside a value of unconstrained type. */
  depth: number;
}

/** Free-form object keys stay short even when free strings may be long. */
const KEY_CHARS = 24;

/** Longest encoding of one string character: a `\uXXXX` escape. */
const CHAR_BYTES = 6;

const QUOTE = gbnfLiteral('"');
const COMMA = gbnfLiteral(',');

/**
 * Emits compact JSON only (no whitespace), and no unbounded repetition: every
 * repeat has a maximum, every rule refers only to rules for smaller values.
 * Strings are printable ASCII plus escapes; `\uXXXX` (no surrogates) covers
 * other characters, because llama.cpp's grammar matcher lets ill-formed UTF-8
 * through for non-ASCII code points and the output must decode cleanly.
 */
export class JsonGrammarEmitter {
  readonly gbnf = new GbnfBuilder();
  /** Nodes reached through several $refs are emitted once. */
  private readonly memo = new Map<SchemaNode, Piece>();
  private readonly anyByDepth = new Map<number, Piece>();
  private lark?: LarkPieces;

  constructor(private readonly caps: SizeCaps) {}

  emit(node: SchemaNode, hint: string): Piece {
    let piece = this.memo.get(node);
    if (!piece) {
      piece = this.build(node, hint);
      this.memo.set(node, piece);
    }
    return piece;
  }

  private build(node: SchemaNode, hint: string): Piece {
    switch (node.kind) {
      case 'any':
        return this.any(this.caps.depth);
      case 'literal':
        return { expr: gbnfLiteral(node.json), max: node.json.length };
      case 'union': {
        const options = node.options.filter((o) => o.kind !== 'literal').map((o, i) => this.emit(o, `${hint}-${i}`));
        // Literals (enum values) as one trie: the matcher follows a few branches, not one per value.
        const literals = node.options.flatMap((o) => (o.kind === 'literal' ? [o.json] : []));
        if (literals.length) options.push({ expr: trie(literals), max: Math.max(...literals.map((l) => l.length)) });
        const body = [...new Set(options.map((o) => o.expr))].join(' | ');
        return { expr: this.gbnf.rule(hint, body), max: Math.max(...options.map((o) => o.max)) };
      }
      case 'string': {
        if (node.format) {
          const body = seq(QUOTE, FORMAT_GRAMMARS[node.format], QUOTE);
          return { expr: this.gbnf.rule(node.format, body), max: 2 + FORMAT_LENGTHS[node.format][1] };
        }
        if (node.lark) {
          this.lark ??= new LarkPieces(this.gbnf, this.caps);
          const content = this.lark.piece(node.lark);
          return { expr: this.gbnf.rule('lark', seq(QUOTE, content.expr, QUOTE)), max: 2 + content.max };
        }
        if (node.pattern) {
          const content = patternPiece(node.pattern, this.caps.chars, this.gbnf);
          return { expr: this.gbnf.rule('pattern', seq(QUOTE, content.expr, QUOTE)), max: 2 + content.max };
        }
        return this.text(node.minLength, clamp(this.caps.chars, node.minLength, node.maxLength ?? Infinity));
      }
      case 'number':
        if (node.range) {
          const [lo, hi] = node.range;
          const max = Math.max(String(lo).length, String(hi).length);
          if (node.integer) return { expr: this.gbnf.rule(`integer-${lo}-to-${hi}`, integerRange(lo, hi)), max };
          const d = this.caps.digits;
          const body =
            lo < hi
              ? `(${naturals(lo, hi - 1)}) ("." ${repeat('[0-9]', 1, d)})? | ${gbnfLiteral(String(hi))}`
              : gbnfLiteral(String(lo));
          return { expr: this.gbnf.rule(`number-${lo}-to-${hi}`, body), max: max + 1 + d };
        }
        return this.number(node);
      case 'object':
        return this.object(node, node.name ?? hint);
      case 'array':
        return this.array(node, node.name ?? hint);
    }
  }

  /** A JSON string of `min` to `max` characters. */
  private text(min: number, max: number): Piece {
    const char = this.gbnf.rule('char', String.raw`[ !#-\[\]-~] | "\\" escape`);
    this.gbnf.rule('escape', String.raw`["\\/bfnrt] | "u" ([0-9a-ce-f] [0-9a-f]{3} | "d" [0-7] [0-9a-f]{2})`);
    const body = seq(QUOTE, repeat(char, min, max), QUOTE);
    return { expr: this.gbnf.rule(`string-${max}`, body), max: 2 + CHAR_BYTES * max };
  }

  /** No exponent, so the digit caps (and the schema's bounds) limit the length. */
  private number({ integer, sign, digits }: Pick<NumberNode, 'integer' | 'sign' | 'digits'>): Piece {
    const d = Math.max(1, Math.min(this.caps.digits, digits ?? Infinity));
    const minus = sign === 'negative' ? '"-"' : sign === 'any' ? '"-"?' : '';
    // A negative integer, or a positive one, cannot be 0.
    const nonZero = sign === 'positive' || (integer && sign === 'negative');
    const whole = seq('[1-9]', repeat('[0-9]', 0, d - 1));
    const body = seq(
      minus,
      nonZero ? (d > 1 ? `(${whole})` : whole) : `("0" | ${whole})`,
      integer ? '' : `("." ${repeat('[0-9]', 1, this.caps.digits)})?`,
    );
    const name = `${sign === 'any' ? '' : `${sign}-`}${integer ? 'integer' : 'number'}`;
    return {
      expr: this.gbnf.rule(name, body),
      max: (minus ? 1 : 0) + d + (integer ? 0 : 1 + this.caps.digits),
    };
  }

  private object(node: ObjectNode, hint: string): Piece {
    if (node.properties.length === 0)
      return this.freeObject(
        node.additional ? this.emit(node.additional, `${hint}-value`) : null,
        hint,
        node.minKeys ?? 0,
        node.maxKeys ?? Infinity,
      );

    // Members in declared order; optional ones may be skipped, so each position has two
    // continuations: before anything was written (no comma) and after (comma first).
    let first = '';
    let next = '';
    let max = 2;
    node.properties.forEach((p) => (max += p.keyJson.length + 1));
    for (let i = node.properties.length - 1; i >= 0; i--) {
      const p = node.properties[i];
      const value = this.emit(p.value, `${hint}-${p.keyJson}`);
      max += value.max + (i > 0 ? 1 : 0);
      const member = seq(gbnfLiteral(`${p.keyJson}:`), value.expr);
      const firstHere = seq(member, next);
      const nextHere = seq(COMMA, member, next);
      first = this.gbnf.rule(`${hint}-from-${i}`, p.required ? firstHere : alternatives(firstHere, first));
      next = this.gbnf.rule(`${hint}-after-${i}`, p.required ? nextHere : alternatives(nextHere, next));
    }
    return { expr: this.gbnf.rule(hint, seq('"{"', first, '"}"')), max };
  }

  /** Up to `caps.keys` members with free keys (duplicates are possible: a bounded grammar cannot rule them out). */
  private freeObject(value: Piece | null, hint: string, minKeys = 0, maxKeys = Infinity): Piece {
    const keys = value ? clamp(this.caps.keys, minKeys, maxKeys) : 0;
    if (!value || keys === 0) return { expr: gbnfLiteral('{}'), max: 2 };
    // Several members need names that can differ: at least one character each.
    const key = this.text(minKeys > 1 ? 1 : 0, Math.max(minKeys > 1 ? 1 : 0, Math.min(this.caps.chars, KEY_CHARS)));
    const member = {
      expr: this.gbnf.rule(`${hint}-member`, seq(key.expr, '":"', value.expr)),
      max: key.max + 1 + value.max,
    };
    return this.list('{', '}', [], member, minKeys, keys, hint);
  }

  private array(node: ArrayNode, hint: string): Piece {
    const most = node.items ? (node.maxItems ?? Infinity) : Math.min(node.maxItems ?? Infinity, node.prefix.length);
    const limit = clamp(this.caps.items, node.minItems, most);
    const prefix = node.prefix.slice(0, limit).map((n, i) => this.emit(n, `${hint}-${i}`));
    const tail = limit > prefix.length ? this.emit(node.items!, `${hint}-item`) : null;
    return this.list('[', ']', prefix, tail, node.minItems, limit, hint);
  }

  /** `open` elements `close`: positional `prefix` pieces, then copies of `tail`, `min` to `limit` in all. */
  private list(
    open: string,
    close: string,
    prefix: Piece[],
    tail: Piece | null,
    min: number,
    limit: number,
    hint: string,
  ): Piece {
    const from = (i: number): string => {
      if (i >= limit) return '';
      if (i < prefix.length) {
        const here = seq(i > 0 ? COMMA : '', prefix[i].expr, from(i + 1));
        return i < min ? here : `(${here})?`;
      }
      const lo = Math.max(0, min - i);
      const following = () => this.gbnf.rule(`${hint}-next`, seq(COMMA, tail!.expr));
      if (i > 0) return repeat(following(), lo, limit - i);
      const all = limit > 1 ? seq(tail!.expr, repeat(following(), Math.max(0, lo - 1), limit - 1)) : tail!.expr;
      return lo > 0 ? all : `(${all})?`;
    };
    let max = 2 + Math.max(0, limit - 1);
    for (let i = 0; i < limit; i++) max += (prefix[i] ?? tail!).max;
    return { expr: this.gbnf.rule(hint, seq(gbnfLiteral(open), from(0), gbnfLiteral(close))), max };
  }

  /** Any JSON value with arrays/objects nested at most `depth` deep. */
  private any(depth: number): Piece {
    const cached = this.anyByDepth.get(depth);
    if (cached) return cached;
    const scalars = [
      this.text(0, this.caps.chars),
      this.number({ integer: false, sign: 'any', digits: null }),
      { expr: '"true" | "false" | "null"', max: 5 },
    ];
    const options =
      depth === 0
        ? scalars
        : [
            ...scalars,
            this.list('[', ']', [], this.any(depth - 1), 0, this.caps.items, `array-${depth}`),
            this.freeObject(this.any(depth - 1), `object-${depth}`),
          ];
    const piece = {
      expr: this.gbnf.rule(`any-${depth}`, options.map((o) => o.expr).join(' | ')),
      max: Math.max(...options.map((o) => o.max)),
    };
    this.anyByDepth.set(depth, piece);
    return piece;
  }
}

/** `a | b`, or `a?` when b matches only the empty string. */
const alternatives = (a: string, b: string) => (b === '' ? `(${a})?` : `${a} | ${b}`);

const clamp = (value: number, lo: number, hi: number) => Math.max(lo, Math.min(value, hi));
