import { checkJson } from './json-check.js';
import { LARK_KEYWORD, larkGrammar, LarkExpr } from './lark-grammar.js';
import { LarkUnsupported } from './lark-syntax.js';
import { parsePattern, writable } from './pattern-grammar.js';
import { NumberNode, SchemaNode, STRING_FORMATS, StringFormat } from './schema-node.js';
import { count } from './schema-keywords.js';
import { FORMAT_LENGTHS } from './string-formats.js';

type Flat = Record<string, unknown>;
type Maybe = SchemaNode | null;

/** Integer ranges at most this wide are written as the list of their values, so the grammar holds them exactly. */
const ENUMERATED_RANGE = 64;

/** One of the options; null when none can be written. */
export function union(options: Maybe[]): Maybe {
  const seen = new Set<string>();
  const kept = options.filter((n): n is SchemaNode => {
    if (!n) return false;
    // Only literals are compared by value; other nodes are cheap enough to keep.
    if (n.kind !== 'literal') return true;
    if (seen.has(n.json)) return false;
    seen.add(n.json);
    return true;
  });
  if (kept.length === 0) return null;
  return kept.length === 1 ? kept[0] : { kind: 'union', options: kept };
}

export function stringNode(s: Flat): Maybe {
  const minLength = count(s, 'minLength') ?? 0;
  const maxLength = count(s, 'maxLength');
  if (maxLength !== null && minLength > maxLength) return null;
  const format = s.format as string | undefined;
  if (format !== undefined && STRING_FORMATS.includes(format as StringFormat)) {
    const [lo, hi] = FORMAT_LENGTHS[format as StringFormat];
    // Formats have fixed shapes: length limits that cut into them leave the format to the result check.
    if (minLength <= lo && (maxLength === null || maxLength >= hi))
      return { kind: 'string', minLength: 0, maxLength: null, format: format as StringFormat };
  }
  const lark =
    typeof s[LARK_KEYWORD] === 'string' && minLength === 0 && maxLength === null ? larkNode(s[LARK_KEYWORD]) : null;
  if (lark) return { kind: 'string', minLength, maxLength, format: null, lark };
  if (typeof s.pattern === 'string' && minLength === 0 && maxLength === null) {
    const pattern = parsePattern(s.pattern);
    if (pattern && writable(pattern)) return { kind: 'string', minLength, maxLength, format: null, pattern };
  }
  return { kind: 'string', minLength, maxLength, format: null };
}

/** Bounds as the grammar can hold them: the sign, the integer part's digits, or (narrow integer ranges) every value. */
export function numberNode(s: Flat, integer: boolean): Maybe {
  let lo = -Infinity;
  let hi = Infinity;
  let loOpen = false;
  let hiOpen = false;
  const raise = (v: number, open: boolean) => {
    if (v > lo || (v === lo && open)) [lo, loOpen] = [v, open];
  };
  const lower = (v: number, open: boolean) => {
    if (v < hi || (v === hi && open)) [hi, hiOpen] = [v, open];
  };
  if (typeof s.minimum === 'number') raise(s.minimum, s.exclusiveMinimum === true);
  if (typeof s.maximum === 'number') lower(s.maximum, s.exclusiveMaximum === true);
  if (typeof s.exclusiveMinimum === 'number') raise(s.exclusiveMinimum, true);
  if (typeof s.exclusiveMaximum === 'number') lower(s.exclusiveMaximum, true);
  const step = typeof s.multipleOf === 'number' ? s.multipleOf : null;
  if (integer) {
    lo = loOpen ? Math.floor(lo) + 1 : Math.ceil(lo);
    hi = hiOpen ? Math.ceil(hi) - 1 : Math.floor(hi);
    if (lo > hi) return null;
    if (hi - lo < ENUMERATED_RANGE) {
      const values: SchemaNode[] = [];
      for (let v = lo; v <= hi; v++)
        if (step === null || checkJson(v, { multipleOf: step }) === null)
          values.push({ kind: 'literal', json: String(v) });
      return union(values);
    }
  } else if (lo > hi || (lo === hi && (loOpen || hiOpen))) return null;
  const sign: NumberNode['sign'] =
    integer && lo >= 1
      ? 'positive'
      : lo >= 0
        ? 'nonNegative'
        : (integer ? hi <= -1 : hi < 0 || (hi === 0 && hiOpen))
          ? 'negative'
          : 'any';
  const most = Math.max(Math.abs(lo), Math.abs(hi));
  // A bounded integer range (zod's .int().min().max()) is held digit by digit; multipleOf is checked after.
  if (integer && most < 1e15) return { kind: 'number', integer, sign, digits: null, range: [lo, hi] };
  // A non-negative bounded number (a ratio, a price) is held between the whole numbers inside its bounds.
  const from = loOpen ? Math.floor(lo) + 1 : Math.ceil(lo);
  const to = hiOpen ? Math.ceil(hi) - 1 : Math.floor(hi);
  if (!integer && from >= 0 && from <= to && most < 1e15)
    return { kind: 'number', integer, sign, digits: null, range: [from, to] };
  // Digits of the integer part that the largest allowed magnitude needs; past 1e15 the size caps are smaller anyway.
  const digits = most < 1e15 ? String(Math.floor(most)).length : null;
  return { kind: 'number', integer, sign, digits };
}

/**
 * A Lark grammar the string's text must follow; null (the string left free, the grammar described only)
 * for one outside the subset the grammar can write.
 */
function larkNode(definition: string): LarkExpr | null {
  try {
    return larkGrammar(definition);
  } catch (err) {
    if (err instanceof LarkUnsupported) return null;
    throw err;
  }
}
