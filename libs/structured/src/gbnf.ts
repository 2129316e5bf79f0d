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
 * llama.cpp refuses a single `{m,n}` that expands to more than 2000 rules, so
 * long repetitions are written as consecutive chunks.
 */
const MAX_REPEAT = 1000;

/** More repetitions than any output within the grammar size limits can hold. */
const MAX_REPEATED = 1 << 26;

/** `item` repeated between `min` and `max` times; '' when it can only appear zero times. */
export function repeat(item: string, min: number, max: number): string {
  // Callers bound counts by the output budget first; this keeps a slip from looping for ever.
  if (!Number.isFinite(max) || max > MAX_REPEATED)
    throw new RangeError(`a repetition of ${max} is past the ${MAX_REPEATED} any grammar may need`);
  const parts: string[] = [];
  for (; max > 0; min = Math.max(0, min - MAX_REPEAT), max -= MAX_REPEAT) {
    const lo = Math.min(min, MAX_REPEAT);
    const hi = Math.min(max, MAX_REPEAT);
    parts.push(lo === 1 && hi === 1 ? item : lo === hi ? `${item}{${lo}}` : `${item}{${lo},${hi}}`);
  }
  return parts.join(' ');
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
