import { GbnfBuilder, gbnfLiteral, repeat, seq } from './gbnf.js';
import { ArrayNode, ObjectNode, SchemaNode } from './schema-node.js';
import { JsonSchema, resolveSchema } from './schema-support.js';
import { FORMAT_GRAMMARS, FORMAT_LENGTHS } from './string-formats.js';

export interface JsonGrammar {
  /** GBNF text with a `root` rule, accepted by llama.cpp (node-llama-cpp `llama.createGrammar({grammar})`). */
  gbnf: string;
  /** Upper bound, in UTF-8 bytes, of any string the grammar accepts. */
  maxBytes: number;
}

/** Limits on everything the schema leaves open; schema minimums and maximums override them. */
interface SizeCaps {
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

/**
 * From generous to tight; every column is non-increasing, so maxBytes shrinks
 * down the ladder. Depth goes first because nested free values multiply sizes.
 */
const LADDER: SizeCaps[] = [
  { chars: 256, items: 8, keys: 8, digits: 15, depth: 3 },
  { chars: 128, items: 8, keys: 8, digits: 15, depth: 2 },
  { chars: 64, items: 6, keys: 6, digits: 12, depth: 2 },
  { chars: 48, items: 6, keys: 6, digits: 12, depth: 1 },
  { chars: 32, items: 4, keys: 4, digits: 10, depth: 1 },
  { chars: 24, items: 4, keys: 4, digits: 8, depth: 1 },
  { chars: 16, items: 3, keys: 3, digits: 6, depth: 1 },
  { chars: 12, items: 3, keys: 3, digits: 6, depth: 0 },
  { chars: 8, items: 2, keys: 2, digits: 4, depth: 0 },
  { chars: 4, items: 1, keys: 1, digits: 3, depth: 0 },
  { chars: 2, items: 1, keys: 1, digits: 2, depth: 0 },
  { chars: 0, items: 0, keys: 0, digits: 1, depth: 0 },
];

/** Free-form object keys stay short even when free strings may be long. */
const KEY_CHARS = 24;

/** Longest encoding of one string character: a `\uXXXX` escape. */
const CHAR_BYTES = 6;

/** response_format json_object: any object. */
const JSON_OBJECT: SchemaNode = { kind: 'object', properties: [], additional: { kind: 'any' } };

/**
 * The grammar for `schema` (null: any JSON object, for response_format json_object) whose longest output fits `maxBytes`.
 * Chooses the most generous size caps that fit (string lengths, array items, extra object properties, number digits),
 * never below what the schema itself requires (minLength, minItems, required properties...).
 * Returns null when even the tightest caps cannot fit `maxBytes`. Throws UnsupportedSchemaError (exported, with `.problem: SchemaProblem`) for an unsupported schema.
 */
export function jsonSchemaGrammar(schema: JsonSchema | null, maxBytes: number): JsonGrammar | null {
  const node = schema === null ? JSON_OBJECT : resolveSchema(schema);
  for (const caps of LADDER) {
    const grammar = emitGrammar(node, caps);
    if (grammar.maxBytes <= maxBytes) return grammar;
  }
  return null;
}

/**
 * Smallest maxBytes for which jsonSchemaGrammar(schema, maxBytes) is not null (used to give a clear 400 when max_tokens is too small).
 * Throws UnsupportedSchemaError like jsonSchemaGrammar.
 */
export function minimumJsonBytes(schema: JsonSchema | null): number {
  const node = schema === null ? JSON_OBJECT : resolveSchema(schema);
  return emitGrammar(node, LADDER[LADDER.length - 1]).maxBytes;
}

function emitGrammar(node: SchemaNode, caps: SizeCaps): JsonGrammar {
  const emitter = new JsonGrammarEmitter(caps);
  const root = emitter.emit(node, 'value');
  return { gbnf: emitter.gbnf.toString(root.expr), maxBytes: root.max };
}

/** A GBNF expression (safe to place in a sequence) and the most bytes it can match. */
interface Piece {
  expr: string;
  max: number;
}

const QUOTE = gbnfLiteral('"');
const COMMA = gbnfLiteral(',');

/**
 * Emits compact JSON only (no whitespace), and no unbounded repetition: every
 * repeat has a maximum, every rule refers only to rules for smaller values.
 * Strings are printable ASCII plus escapes; `\uXXXX` (no surrogates) covers
 * other characters, because llama.cpp's grammar matcher lets ill-formed UTF-8
 * through for non-ASCII code points and the output must decode cleanly.
 */
class JsonGrammarEmitter {
  readonly gbnf = new GbnfBuilder();
  /** Nodes reached through several $refs are emitted once. */
  private readonly memo = new Map<SchemaNode, Piece>();
  private readonly anyByDepth = new Map<number, Piece>();

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
        const options = node.options.map((o, i) => this.emit(o, `${hint}-${i}`));
        const body = [...new Set(options.map((o) => o.expr))].join(' | ');
        return { expr: this.gbnf.rule(hint, body), max: Math.max(...options.map((o) => o.max)) };
      }
      case 'string': {
        if (node.format) {
          const body = seq(QUOTE, FORMAT_GRAMMARS[node.format], QUOTE);
          return { expr: this.gbnf.rule(node.format, body), max: 2 + FORMAT_LENGTHS[node.format][1] };
        }
        return this.text(node.minLength, clamp(this.caps.chars, node.minLength, node.maxLength ?? Infinity));
      }
      case 'number':
        return this.number(node.integer, node.nonNegative);
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

  /** No exponent, so the digit caps bound the length. */
  private number(integer: boolean, nonNegative: boolean): Piece {
    const d = this.caps.digits;
    const body = seq(
      nonNegative ? '' : '"-"?',
      `("0" | ${seq('[1-9]', repeat('[0-9]', 0, d - 1))})`,
      integer ? '' : `("." ${repeat('[0-9]', 1, d)})?`,
    );
    const name = `${nonNegative ? 'unsigned-' : ''}${integer ? 'integer' : 'number'}`;
    return { expr: this.gbnf.rule(name, body), max: (nonNegative ? 0 : 1) + d + (integer ? 0 : 1 + d) };
  }

  private object(node: ObjectNode, hint: string): Piece {
    if (node.properties.length === 0)
      return this.freeObject(node.additional ? this.emit(node.additional, `${hint}-value`) : null, hint);

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
  private freeObject(value: Piece | null, hint: string): Piece {
    const keys = value ? this.caps.keys : 0;
    if (!value || keys === 0) return { expr: gbnfLiteral('{}'), max: 2 };
    const key = this.text(0, Math.min(this.caps.chars, KEY_CHARS));
    const member = {
      expr: this.gbnf.rule(`${hint}-member`, seq(key.expr, '":"', value.expr)),
      max: key.max + 1 + value.max,
    };
    return this.list('{', '}', [], member, 0, keys, hint);
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
      this.number(false, false),
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
