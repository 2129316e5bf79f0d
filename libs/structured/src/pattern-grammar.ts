/**
 * A `pattern` as a grammar, for the regular expressions schemas mostly carry (`^[A-Z]{3}$`,
 * `^\d{4}-\d{2}$`, `^[a-z0-9_-]+$`): anchored at both ends, made of literals, classes, `.`, `\d`
 * `\w` `\s`, groups, alternation and quantifiers. Anything else (lookarounds, backreferences, word
 * boundaries, an unanchored pattern) gives null, and the pattern is left to the result check.
 *
 * The grammar writes a subset of what the pattern matches: printable ASCII only, without `"` and `\`
 * (which JSON would have to escape), `\s` as a space, and unbounded repeats cut at a count the caller
 * chooses. Every string it allows matches the pattern.
 */
export type Pattern =
  | { t: 'seq'; items: Pattern[] }
  | { t: 'alt'; options: Pattern[] }
  | { t: 'set'; chars: boolean[] }
  | { t: 'rep'; item: Pattern; min: number; max: number };

/** Characters the grammar may write unescaped in a JSON string: printable ASCII but `"` and `\`. */
const WRITABLE = Array.from({ length: 128 }, (_, c) => c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c);

/**
 * Characters a Lark terminal's expression may write: printable ASCII, tab, carriage return and line feed
 * (a grammar's text spans lines, and code holds quotes and backslashes), each escaped as JSON needs.
 */
export const TEXT_CHARS = Array.from(
  { length: 128 },
  (_, c) => (c >= 0x20 && c <= 0x7e) || c === 9 || c === 10 || c === 13,
);
const DIGIT = (c: number) => c >= 0x30 && c <= 0x39;
const WORD = (c: number) => DIGIT(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
const SPACE = (c: number) => c === 0x20;

/** `\n`, `\r`, `\t`, `\f`, `\v`: the control characters a pattern names by letter. */
const CONTROL_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', f: '\f', v: '\v' };

/** The most any repeat may be written as, however large its count: longer patterns are left to the result check. */
const MAX_COUNT = 1000;

class Unsupported extends Error {}

/** `alphabet`: the characters the grammar may write (a set is cut to them), printable ASCII but `"` and `\` unless told. */
export function parsePattern(source: string, alphabet: readonly boolean[] = WRITABLE): Pattern | null {
  if (!source.startsWith('^') || !source.endsWith('$') || source.endsWith('\\$')) return null;
  const parser = new PatternParser(source.slice(1, -1), alphabet);
  try {
    const pattern = parser.alternation();
    if (parser.pos !== parser.src.length) return null;
    return pattern;
  } catch (err) {
    if (err instanceof Unsupported) return null;
    throw err;
  }
}

class PatternParser {
  pos = 0;
  constructor(
    readonly src: string,
    private readonly alphabet: readonly boolean[],
  ) {}

  private setOf(test: (c: number) => boolean): boolean[] {
    return this.alphabet.map((ok, c) => ok && test(c));
  }

  alternation(): Pattern {
    const options = [this.sequence()];
    while (this.src[this.pos] === '|') {
      this.pos++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0]! : { t: 'alt', options };
  }

  private sequence(): Pattern {
    const items: Pattern[] = [];
    while (this.pos < this.src.length && this.src[this.pos] !== '|' && this.src[this.pos] !== ')')
      items.push(this.quantified(this.atom()));
    return { t: 'seq', items };
  }

  private atom(): Pattern {
    const ch = this.src[this.pos++]!;
    switch (ch) {
      case '(': {
        if (this.src[this.pos] === '?') {
          if (this.src[this.pos + 1] !== ':') throw new Unsupported();
          this.pos += 2;
        }
        const inner = this.alternation();
        if (this.src[this.pos++] !== ')') throw new Unsupported();
        return inner;
      }
      case '[':
        return this.charClass();
      case '.':
        // Line breaks are outside `.` in JavaScript's and Python's expressions alike.
        return { t: 'set', chars: this.setOf((c) => c !== 10 && c !== 13) };
      case '\\':
        return { t: 'set', chars: this.escape(false) };
      case '^':
      case '$':
      case '*':
      case '+':
      case '?':
      case '{':
      case '}':
      case ']':
        throw new Unsupported();
      default:
        return { t: 'set', chars: this.literal(ch) };
    }
  }

  private literal(ch: string): boolean[] {
    const code = ch.charCodeAt(0);
    if (!this.alphabet[code]) throw new Unsupported();
    return this.setOf((c) => c === code);
  }

  /** `\d`, `\w`, `\s`, or an escaped punctuation character. */
  private escape(inClass: boolean): boolean[] {
    const ch = this.src[this.pos++];
    if (ch === undefined) throw new Unsupported();
    if (ch === 'd') return this.setOf(DIGIT);
    if (ch === 'w') return this.setOf(WORD);
    if (ch === 's') return this.setOf(SPACE);
    const control = CONTROL_ESCAPES[ch];
    if (control !== undefined) return inClass ? this.raw(control) : this.literal(control);
    if (/[A-Za-z0-9]/.test(ch)) throw new Unsupported();
    // Escaped punctuation: as it stands in a class; outside one, only a character the grammar writes.
    return inClass ? this.raw(ch) : this.literal(ch);
  }

  private charClass(): Pattern {
    const negated = this.src[this.pos] === '^';
    if (negated) this.pos++;
    const chosen = new Array<boolean>(128).fill(false);
    let first = true;
    while (this.src[this.pos] !== ']' || first) {
      first = false;
      const ch = this.src[this.pos++];
      if (ch === undefined) throw new Unsupported();
      // Inside a negated class any code point counts: only ASCII ones can be listed here.
      const lo = ch === '\\' ? this.escape(true) : this.raw(ch);
      if (this.src[this.pos] === '-' && this.src[this.pos + 1] !== ']' && this.src[this.pos + 1] !== undefined) {
        this.pos++;
        const next = this.src[this.pos++]!;
        const from = lo.indexOf(true);
        if (lo.filter(Boolean).length !== 1 || next === '\\') throw new Unsupported();
        const to = this.raw(next).indexOf(true);
        if (to < from) throw new Unsupported();
        for (let c = from; c <= to; c++) chosen[c] = true;
      } else lo.forEach((on, c) => (chosen[c] ||= on));
    }
    this.pos++;
    return { t: 'set', chars: this.alphabet.map((ok, c) => ok && chosen[c] !== negated) };
  }

  /** A character inside a class, as it stands (it may be one the grammar does not write). */
  private raw(ch: string): boolean[] {
    const code = ch.charCodeAt(0);
    if (code >= 128) throw new Unsupported();
    return Array.from({ length: 128 }, (_, c) => c === code);
  }

  private quantified(item: Pattern): Pattern {
    let min: number;
    let max: number;
    const ch = this.src[this.pos];
    if (ch === '?') [min, max] = [0, 1];
    else if (ch === '*') [min, max] = [0, Infinity];
    else if (ch === '+') [min, max] = [1, Infinity];
    else if (ch === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.pos));
      if (!m) throw new Unsupported();
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (min > MAX_COUNT || max < min) throw new Unsupported();
      this.pos += m[0].length - 1;
    } else return item;
    this.pos++;
    // A lazy quantifier matches the same strings.
    if (this.src[this.pos] === '?') this.pos++;
    return this.quantified({ t: 'rep', item, min, max });
  }
}

/** Fewest characters a match has. */
export function leastLength(p: Pattern): number {
  switch (p.t) {
    case 'seq':
      return p.items.reduce((n, i) => n + leastLength(i), 0);
    case 'alt':
      return Math.min(...p.options.map(leastLength));
    case 'set':
      return 1;
    case 'rep':
      return p.min * leastLength(p.item);
  }
}

/** Whether the grammar can write some string for it (a class may have lost all its characters). */
export function writable(p: Pattern): boolean {
  switch (p.t) {
    case 'seq':
      return p.items.every(writable);
    case 'alt':
      return p.options.some(writable);
    case 'set':
      return p.chars.some(Boolean);
    case 'rep':
      return p.min === 0 || writable(p.item);
  }
}

/** A GBNF class for a set of ASCII characters. */
export function gbnfClass(chars: boolean[]): string {
  const esc = (c: number) => {
    const ch = String.fromCharCode(c);
    return /[\][\\^-]/.test(ch) ? `\\${ch}` : ch;
  };
  let out = '';
  for (let c = 0; c < 128; c++) {
    if (!chars[c]) continue;
    let end = c;
    while (end + 1 < 128 && chars[end + 1]) end++;
    out += end > c ? `${esc(c)}-${esc(end)}` : esc(c);
    c = end;
  }
  return `[${out}]`;
}
