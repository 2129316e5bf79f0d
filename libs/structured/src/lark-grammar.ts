import { MAX_GRAMMAR_BYTES } from './gbnf.js';
import { leastLength, parsePattern, Pattern, TEXT_CHARS, writable } from './pattern-grammar.js';
import { LarkDocument, LarkSyntax, LarkUnsupported, readLark } from './lark-syntax.js';

/**
 * A Lark grammar as the grammar emitter writes it: its `start` rule with every name resolved, a rule
 * used in several places shared as one node. A narrowing of the grammar, never a widening: every
 * text it allows is one the grammar matches. Regular expressions are written as printable ASCII,
 * tab and line breaks (`i` flags and non-ASCII classes aside); `%ignore`d terminals may stand between
 * a rule's items (Lark lets them stand between any two tokens).
 */
export type LarkExpr =
  | { t: 'text'; text: string }
  | { t: 'pattern'; pattern: Pattern }
  | { t: 'seq'; items: LarkExpr[] }
  | { t: 'alt'; options: LarkExpr[] }
  | { t: 'rep'; item: LarkExpr; min: number; max: number }
  | { t: 'rule'; name: string; body: LarkExpr };

/**
 * Lark's `common` terminals this server can write, as `%import common.X` brings them in. Left out:
 * `C_COMMENT`, whose lazy expression stops at the first star and slash (a character grammar would let
 * its text hold one); `ESCAPED_STRING`'s look-behind is written as what it matches.
 */
const COMMON = String.raw`
DIGIT: "0".."9"
HEXDIGIT: "a".."f"|"A".."F"|DIGIT
INT: DIGIT+
SIGNED_INT: ["+"|"-"] INT
DECIMAL: INT "." INT? | "." INT
_EXP: ("e"|"E") SIGNED_INT
FLOAT: INT _EXP | DECIMAL _EXP?
SIGNED_FLOAT: ["+"|"-"] FLOAT
NUMBER: FLOAT | INT
SIGNED_NUMBER: ["+"|"-"] NUMBER
ESCAPED_STRING: "\"" (/[^"\\\n]/ | "\\" /./)* "\""
LCASE_LETTER: "a".."z"
UCASE_LETTER: "A".."Z"
LETTER: UCASE_LETTER | LCASE_LETTER
WORD: LETTER+
CNAME: ("_"|LETTER) ("_"|LETTER|DIGIT)*
WS_INLINE: (" "|/\t/)+
WS: /[ \t\f\r\n]/+
CR: /\r/
LF: /\n/
NEWLINE: (CR? LF)+
SH_COMMENT: /#[^\n]*/
CPP_COMMENT: /\/\/[^\n]*/
SQL_COMMENT: /--[^\n]*/
`;

let common: LarkDocument | undefined;

/**
 * The schema keyword that holds a string to a Lark grammar: `{"type": "string", "x-lark": "start: ..."}`.
 * A Responses custom tool's Lark format reaches the engine this way, as its input's schema, the path a
 * regular-expression format takes as `pattern`. Other engines take it as an annotation and ignore it.
 */
export const LARK_KEYWORD = 'x-lark';

/**
 * The most parts (expressions, and the parts of regular expressions) a grammar may have: past it, it is
 * left described rather than translated, so that a hostile grammar costs its request milliseconds and
 * its grammar stays far below the size of grammar refused as too large. Codex's `apply_patch` has about 90.
 */
const MAX_PARTS = 2000;

/** Rules reached through more rules than this are refused rather than resolved with a deep stack. */
const MAX_CHAIN = 200;

/**
 * A schema as a prompt, or another server, is shown it: the Lark keyword left out, since the tool's
 * description already carries the grammar, and a template writing the schema as JSON would write it
 * twice (and another server would take it as an annotation anyway).
 */
export function withoutLarkKeyword<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((s: unknown) => withoutLarkKeyword(s)) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema)
      // A property named like the keyword maps to a schema, never to a string.
      .filter(([k, v]) => !(k === LARK_KEYWORD && typeof v === 'string'))
      .map(([k, v]) => [k, withoutLarkKeyword(v)]),
  ) as T;
}

/** Whether a name is a terminal's (upper case) rather than a rule's: `%ignore` acts between a rule's items only. */
const isTerminal = (name: string) => /^_?[A-Z]/.test(name);

/**
 * The grammar's `start` rule, resolved; throws LarkUnsupported naming what is outside the subset
 * (a recursive rule among them: the grammar is bounded, and recursion has no bound to cut at).
 */
export function larkGrammar(definition: string): LarkExpr {
  let known = translated.get(definition);
  if (!known) {
    try {
      known = { grammar: translate(definition) };
    } catch (err) {
      if (!(err instanceof LarkUnsupported)) throw err;
      known = { problem: err.message };
    }
    if (translated.size >= TRANSLATED_CACHE_SIZE) translated.delete(translated.keys().next().value as string);
    translated.set(definition, known);
  }
  if ('problem' in known) throw new LarkUnsupported(known.problem);
  return known.grammar;
}

/**
 * Grammars read lately, by their text: a client sends the same one with every request, and it is read
 * when the request is checked, when its grammar is built and when its reply is mapped. Their trees are
 * never changed once built.
 */
const translated = new Map<string, { grammar: LarkExpr } | { problem: string }>();
const TRANSLATED_CACHE_SIZE = 32;

function translate(definition: string): LarkExpr {
  common ??= readLark(COMMON);
  const doc = readLark(definition);
  if (!doc.definitions.has('start')) throw new LarkUnsupported('a grammar without a `start` rule');
  const resolver = new Resolver(doc, common);
  const start = resolver.rule('start', false);
  if (!start) throw new LarkUnsupported('a grammar no text this server writes can match');
  // Left described, as it was, rather than refused: no reply could hold its shortest text.
  if (larkLeast(start) > MAX_GRAMMAR_BYTES) throw new LarkUnsupported('a grammar whose shortest text is over 4 MiB');
  return start;
}

/** Why a grammar cannot be enforced (the construct outside the subset), or null when it can. */
export function larkProblem(definition: string): string | null {
  try {
    larkGrammar(definition);
    return null;
  } catch (err) {
    if (err instanceof LarkUnsupported) return err.message;
    throw err;
  }
}

class Resolver {
  private readonly done = new Map<string, LarkExpr | null>();
  private readonly active: string[] = [];
  private readonly ignored: LarkExpr | null;
  private parts = 0;

  constructor(
    private readonly doc: LarkDocument,
    private readonly lib: LarkDocument,
  ) {
    const options = doc.ignored.map((s) => this.expr(s, false, true)).filter((e): e is LarkExpr => e !== null);
    this.ignored = options.length === 0 ? null : options.length === 1 ? options[0]! : { t: 'alt', options };
  }

  /** A definition as a shared node; null when it can write nothing. `inLib`: named inside `common`. */
  rule(name: string, inLib: boolean): LarkExpr | null {
    const key = `${inLib ? 'common.' : ''}${name}`;
    if (this.done.has(key)) return this.done.get(key)!;
    if (this.active.includes(key)) throw new LarkUnsupported(`the recursive rule \`${name}\``);
    if (this.active.length >= MAX_CHAIN) throw new LarkUnsupported(`rules chained over ${MAX_CHAIN} deep`);
    const own = (inLib ? this.lib : this.doc).definitions.get(name);
    if (!own) {
      const imported = inLib ? undefined : this.doc.imports.get(name);
      if (imported === undefined) throw new LarkUnsupported(`the undefined name \`${name}\``);
      if (!this.lib.definitions.has(imported)) throw new LarkUnsupported(`\`%import common.${imported}\``);
      const node = this.rule(imported, true);
      this.done.set(key, node);
      return node;
    }
    this.active.push(key);
    const lexical = isTerminal(name);
    const body = this.expr(own, inLib, lexical);
    this.active.pop();
    const node: LarkExpr | null = body && { t: 'rule', name, body: lexical ? body : this.spaced(body) };
    this.done.set(key, node);
    return node;
  }

  /** An expression as written; null where it can write nothing. `lexical`: inside a terminal. */
  private expr(s: LarkSyntax, inLib: boolean, lexical: boolean): LarkExpr | null {
    this.count(1);
    switch (s.t) {
      case 'text':
        return { t: 'text', text: s.text };
      case 'range': {
        const [from, to] = [s.from, s.to].map((c) => (c.length === 1 ? c.charCodeAt(0) : -1));
        if (from! < 0 || to! < 0 || from! > to!) throw new LarkUnsupported(`the range "${s.from}".."${s.to}"`);
        const chars = TEXT_CHARS.map((ok, c) => ok && c >= from! && c <= to!);
        return chars.some(Boolean) ? { t: 'pattern', pattern: { t: 'set', chars } } : null;
      }
      case 'regex': {
        // `x` changes what the expression's spaces mean; the other flags only widen what it matches.
        if (s.flags.includes('x')) throw new LarkUnsupported(`the verbose expression /${s.source}/${s.flags}`);
        const pattern = parsePattern(`^(?:${s.source})$`, TEXT_CHARS);
        if (!pattern) throw new LarkUnsupported(`the expression /${s.source}/`);
        this.count(patternParts(pattern));
        return writable(pattern) ? { t: 'pattern', pattern } : null;
      }
      case 'name':
        // A rule's name inside a terminal is an error in Lark too.
        if (lexical && !isTerminal(s.name)) throw new LarkUnsupported(`the rule \`${s.name}\` inside a terminal`);
        return this.rule(s.name, inLib);
      case 'seq': {
        const items = s.items.map((i) => this.expr(i, inLib, lexical));
        return items.every((i): i is LarkExpr => i !== null) ? { t: 'seq', items } : null;
      }
      case 'alt': {
        const options = s.options.map((o) => this.expr(o, inLib, lexical)).filter((o): o is LarkExpr => o !== null);
        return options.length === 0 ? null : options.length === 1 ? options[0]! : { t: 'alt', options };
      }
      case 'rep': {
        const item = this.expr(s.item, inLib, lexical);
        if (item) return { t: 'rep', item, min: s.min, max: s.max };
        return s.min === 0 ? { t: 'seq', items: [] } : null;
      }
    }
  }

  private count(parts: number): void {
    this.parts += parts;
    if (this.parts > MAX_PARTS) throw new LarkUnsupported(`a grammar of over ${MAX_PARTS} parts`);
  }

  /** A rule's expression with the ignored terminals allowed between its items (and its repeats' copies). */
  private spaced(e: LarkExpr): LarkExpr {
    const gap = this.ignored;
    if (!gap) return e;
    const maybeGap: LarkExpr = { t: 'rep', item: gap, min: 0, max: 1 };
    switch (e.t) {
      case 'seq':
        return {
          t: 'seq',
          items: e.items.flatMap((item, i) => (i ? [maybeGap, this.spaced(item)] : [this.spaced(item)])),
        };
      case 'alt':
        return { t: 'alt', options: e.options.map((o) => this.spaced(o)) };
      case 'rep': {
        if (e.max <= 1) return { ...e, item: this.spaced(e.item) };
        // Named, so the item's text is written once however the copies are laid out.
        const item: LarkExpr = { t: 'rule', name: 'item', body: this.spaced(e.item) };
        const more: LarkExpr = {
          t: 'rep',
          item: { t: 'seq', items: [maybeGap, item] },
          min: Math.max(0, e.min - 1),
          max: e.max - 1,
        };
        const some: LarkExpr = { t: 'seq', items: [item, more] };
        return e.min > 0 ? some : { t: 'rep', item: some, min: 0, max: 1 };
      }
      default:
        return e;
    }
  }
}

/** Fewest characters a text the expression allows has (escapes counted as one: a lower bound of its JSON). */
export function larkLeast(e: LarkExpr, memo = new Map<LarkExpr, number>()): number {
  const known = memo.get(e);
  if (known !== undefined) return known;
  let least: number;
  switch (e.t) {
    case 'text':
      least = e.text.length;
      break;
    case 'pattern':
      least = leastLength(e.pattern);
      break;
    case 'seq':
      least = e.items.reduce((n, i) => n + larkLeast(i, memo), 0);
      break;
    case 'alt':
      least = Math.min(...e.options.map((o) => larkLeast(o, memo)));
      break;
    case 'rep':
      least = e.min * larkLeast(e.item, memo);
      break;
    case 'rule':
      least = larkLeast(e.body, memo);
      break;
  }
  memo.set(e, least);
  return least;
}

function patternParts(p: Pattern): number {
  switch (p.t) {
    case 'seq':
      return 1 + p.items.reduce((n, i) => n + patternParts(i), 0);
    case 'alt':
      return 1 + p.options.reduce((n, o) => n + patternParts(o), 0);
    case 'set':
      return 1;
    case 'rep':
      return 1 + patternParts(p.item);
  }
}
