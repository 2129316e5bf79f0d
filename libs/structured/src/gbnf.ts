/** GBNF string literal for arbitrary text (escape `"`, `\`, control chars, non-ASCII as needed by GBNF). */
export function gbnfLiteral(text: string): string {
  let out = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    // Everything else outside printable ASCII goes as a code point escape, so the
    // grammar text stays ASCII whatever the input.
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    else if (cp > 0xffff) out += `\\U${hex(cp, 8)}`;
    else if (cp > 0x7e) out += `\\u${hex(cp, 4)}`;
    else out += ch;
  }
  return `${out}"`;
}

/** The longest output any grammar is built for, whatever the budget: past it, a schema's least output is refused unwritten. */
export const MAX_GRAMMAR_BYTES = 4 * 1024 * 1024;

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/**
 * llama.cpp refuses a single `{m,n}` that expands to more than 2000 rules (and reads a larger `n` as no
 * bound at all), so no count written here passes this.
 */
const MAX_REPEAT = 1000;

/** More repetitions than any output within the grammar size limits can hold. */
const MAX_REPEATED = 1 << 26;

/** The most optional repetitions one `repeat` writes: blocks of at most MAX_REPEAT, at most MAX_REPEAT of them. */
const MAX_OPTIONAL = MAX_REPEAT * MAX_REPEAT;

/**
 * `item` repeated between `min` and `max` times; '' when it can only appear zero times. `item` must be
 * one symbol (a rule's name, a character class, a literal): llama.cpp multiplies a repeated group's own
 * rules by the count, and refuses the product past 2000.
 */
export function repeat(item: string, min: number, max: number): string {
  // Callers bound counts by the output budget first; this keeps a slip from looping for ever.
  if (!Number.isFinite(max) || max > MAX_REPEATED)
    throw new RangeError(`a repetition of ${max} is past the ${MAX_REPEATED} any grammar may need`);
  if (max - min > MAX_OPTIONAL)
    throw new RangeError(`${max - min} optional repetitions are past the ${MAX_OPTIONAL} one repetition may have`);
  if (max <= MAX_REPEAT) return count(item, min, max);
  return seq(exactly(item, min), upTo(item, max - min));
}

/** `item{lo,hi}` in its shortest form, for counts llama.cpp takes as they are. */
function count(item: string, lo: number, hi: number): string {
  if (hi === 0) return '';
  if (lo === 1 && hi === 1) return item;
  return lo === hi ? `${item}{${lo}}` : `${item}{${lo},${hi}}`;
}

/** `item` exactly `n` times, in consecutive chunks: each chunk is a plain sequence, so the chunks add no rules. */
function exactly(item: string, n: number): string {
  const parts: string[] = [];
  for (let left = n; left > 0; left -= MAX_REPEAT)
    parts.push(count(item, Math.min(left, MAX_REPEAT), Math.min(left, MAX_REPEAT)));
  return parts.join(' ');
}

/**
 * `item` 0 to `n` times. Past MAX_REPEAT, as blocks of `b` items: fewer than `q` whole blocks and a part
 * block, or `q` whole blocks and the rest (n = q·b + r). The two sides match different lengths and each
 * length splits one way only, so the matcher follows a few stacks at a time; `item{0,1000} item{0,1000}…`
 * would match most lengths in as many ways as there are chunks, and the matcher would follow each. It
 * also makes about 3·√n rules where chunks make n.
 */
function upTo(item: string, n: number): string {
  if (n <= MAX_REPEAT) return count(item, 0, n);
  const b = Math.ceil(Math.sqrt(n));
  const q = Math.floor(n / b);
  const block = `(${count(item, b, b)})`;
  return `(${seq(count(block, 0, q - 1), count(item, 0, b - 1))} | ${seq(count(block, q, q), count(item, 0, n - q * b))})`;
}

/** Space-joined sequence, skipping empty parts. */
export const seq = (...parts: string[]): string => parts.filter((p) => p !== '').join(' ');

/**
 * Collects GBNF rules. Identical bodies share one rule, which keeps grammars
 * small when many schema parts need the same string or number shape.
 */
export class GbnfBuilder {
  private readonly rules = new Map<string, string>();
  private readonly byBody = new Map<string, string>();

  /** Name of a rule with this body, creating it (named after `hint`) when new. */
  rule(hint: string, body: string): string {
    const existing = this.byBody.get(body);
    if (existing) return existing;
    const name = this.uniqueName(hint);
    this.rules.set(name, body);
    this.byBody.set(body, name);
    return name;
  }

  /** The grammar text, with `root ::= rootExpr` first. */
  toString(rootExpr: string): string {
    const lines = [`root ::= ${rootExpr}`];
    for (const [name, body] of this.rules) lines.push(`${name} ::= ${body}`);
    return `${lines.join('\n')}\n`;
  }

  private uniqueName(hint: string): string {
    // GBNF names are letters, digits and dashes; "root" is reserved for the entry rule.
    const base =
      hint
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-+|-+$/g, '')
        .slice(0, 40) || 'r';
    let name = base === 'root' ? 'root-value' : base;
    for (let i = 2; this.rules.has(name); i++) name = `${base}-${i}`;
    return name;
  }
}
