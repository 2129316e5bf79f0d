/**
 * Reads the part of Lark's grammar language that clients send for a free-form tool's input (Codex's
 * `apply_patch`): rules and terminals, string literals (with `i`), `"a".."z"` ranges, `/regex/flags`,
 * `|`, `( )`, `[ ]`, `?`, `*`, `+`, `~ n` and `~ n..m`, `-> alias`, priorities, `%import common…` and
 * `%ignore`. Anything else (templates, `%declare`, `%override`, `%extend`, other modules) is refused
 * with a LarkUnsupported naming it.
 */

/** An expression as written: names still unresolved. */
export type LarkSyntax =
  | { t: 'text'; text: string }
  | { t: 'range'; from: string; to: string }
  | { t: 'regex'; source: string; flags: string }
  | { t: 'name'; name: string }
  | { t: 'seq'; items: LarkSyntax[] }
  | { t: 'alt'; options: LarkSyntax[] }
  | { t: 'rep'; item: LarkSyntax; min: number; max: number };

export interface LarkDocument {
  /** Rules and terminals by name. */
  definitions: Map<string, LarkSyntax>;
  /** Names imported from Lark's `common` module: the name used here, and its name there. */
  imports: Map<string, string>;
  /** What `%ignore` lets stand between tokens. */
  ignored: LarkSyntax[];
}

/** A construct outside the subset: the grammar stays described only. */
export class LarkUnsupported extends Error {}

type Token =
  | { k: 'name' | 'number' | 'op' | 'directive'; v: string }
  | { k: 'string'; v: string; flags: string }
  | { k: 'regex'; v: string; flags: string }
  | { k: 'nl' };

/** The most a `~` repetition may count, as a regular expression's `{n,m}`: larger ones are left described. */
const MAX_COUNT = 1000;

/** Parentheses nested deeper than this are refused rather than read with a deep stack. */
const MAX_NESTING = 64;

const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /[0-9]+/y;
const STRING = /"((?:\\[\s\S]|[^"\\\n])*)"(i?)/y;
const REGEX = /\/((?:\\[\s\S]|[^/\\\n])+)\/([imslux]*)/y;
/** Spaces, comments and line breaks up to the next token. */
const GAP = /(?:[ \t\r\n]|\/\/[^\n]*|#[^\n]*)*/y;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  const take = (re: RegExp): RegExpExecArray | null => {
    re.lastIndex = pos;
    const m = re.exec(text);
    if (m) pos = re.lastIndex;
    return m;
  };
  while (pos < text.length) {
    const ch = text[pos]!;
    if (ch === ' ' || ch === '\t' || ch === '\r') pos++;
    else if (text.startsWith('//', pos) || ch === '#')
      pos = text.indexOf('\n', pos) < 0 ? text.length : text.indexOf('\n', pos);
    else if (ch === '\n') {
      take(GAP);
      // A line that starts with `|` goes on with the alternatives above it.
      if (text[pos] !== '|' && tokens.length && tokens[tokens.length - 1]!.k !== 'nl') tokens.push({ k: 'nl' });
    } else if (ch === '"') {
      const m = take(STRING);
      if (!m) throw new LarkUnsupported('an unterminated string literal');
      tokens.push({ k: 'string', v: unescape(m[1]!), flags: m[2]! });
    } else if (ch === '/') {
      const m = take(REGEX);
      if (!m) throw new LarkUnsupported('an unterminated regular expression');
      tokens.push({ k: 'regex', v: m[1]!.replace(/\\\//g, '/'), flags: m[2]! });
    } else if (ch === '%') {
      pos++;
      const m = take(NAME);
      if (!m) throw new LarkUnsupported('a `%` not followed by a directive');
      tokens.push({ k: 'directive', v: m[0] });
    } else if (/[A-Za-z_]/.test(ch)) tokens.push({ k: 'name', v: take(NAME)![0] });
    else if (/[0-9]/.test(ch)) tokens.push({ k: 'number', v: take(NUMBER)![0] });
    else if (text.startsWith('..', pos) || text.startsWith('->', pos)) {
      tokens.push({ k: 'op', v: text.slice(pos, pos + 2) });
      pos += 2;
    } else if (':|()[]?!*+~.,{}'.includes(ch)) {
      tokens.push({ k: 'op', v: ch });
      pos++;
    } else throw new LarkUnsupported(`the character ${JSON.stringify(ch)}`);
  }
  return tokens;
}

/** A string literal's text, its escapes read as Python reads them (an unknown one keeps its backslash). */
function unescape(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[\s\S])/g, (all, esc: string) => {
    if (esc.length > 1) return String.fromCodePoint(parseInt(esc.slice(1), 16));
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', '0': '\0' };
    if (esc in simple) return simple[esc]!;
    return esc === '"' || esc === '\\' || esc === "'" ? esc : all;
  });
}

/** Reads a grammar's text; throws LarkUnsupported for a construct outside the subset. */
export function readLark(text: string): LarkDocument {
  return new LarkReader(tokenize(text)).document();
}

class LarkReader {
  private pos = 0;
  private depth = 0;
  private readonly doc: LarkDocument = { definitions: new Map(), imports: new Map(), ignored: [] };

  constructor(private readonly tokens: Token[]) {}

  document(): LarkDocument {
    while (this.pos < this.tokens.length) {
      const token = this.tokens[this.pos]!;
      if (token.k === 'nl') this.pos++;
      else if (token.k === 'directive') this.directive(token.v);
      else this.definition();
    }
    return this.doc;
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private isOp(v: string): boolean {
    const t = this.peek();
    return t?.k === 'op' && t.v === v;
  }

  private expectOp(v: string, what: string): void {
    if (!this.isOp(v)) throw new LarkUnsupported(what);
    this.pos++;
  }

  private name(what: string): string {
    const t = this.peek();
    if (t?.k !== 'name') throw new LarkUnsupported(what);
    this.pos++;
    return t.v;
  }

  private endOfStatement(what: string): void {
    const t = this.peek();
    if (t && t.k !== 'nl') throw new LarkUnsupported(what);
    this.pos++;
  }

  private directive(kind: string): void {
    this.pos++;
    if (kind === 'ignore') {
      this.doc.ignored.push(this.expansions());
      return this.endOfStatement('more after `%ignore`');
    }
    if (kind !== 'import') throw new LarkUnsupported(`\`%${kind}\``);
    const path = [this.name('`%import` without a module')];
    while (this.isOp('.')) {
      this.pos++;
      path.push(this.name('`%import` with a malformed path'));
    }
    if (this.isOp('(')) {
      this.pos++;
      if (path.join('.') !== 'common') throw new LarkUnsupported(`\`%import ${path.join('.')}\``);
      for (;;) {
        const name = this.name('`%import common (...)` with a malformed list');
        this.doc.imports.set(name, name);
        if (this.isOp(')')) break;
        this.expectOp(',', '`%import common (...)` with a malformed list');
      }
      this.pos++;
    } else {
      const name = path.pop()!;
      if (path.join('.') !== 'common') throw new LarkUnsupported(`\`%import ${[...path, name].join('.')}\``);
      let alias = name;
      if (this.isOp('->')) {
        this.pos++;
        alias = this.name('`%import ... ->` without a name');
      }
      this.doc.imports.set(alias, name);
    }
    this.endOfStatement('more after an `%import`');
  }

  private definition(): void {
    // `?rule` (inlined in the tree) and `!rule` (keeps its tokens) shape the tree only, not the text.
    if (this.isOp('?') || this.isOp('!')) this.pos++;
    const name = this.name('a line that is neither a definition nor a directive');
    if (this.isOp('{')) throw new LarkUnsupported(`the template \`${name}{...}\``);
    if (this.isOp('.')) {
      // A priority steers the parser between readings; any text it allows stays the same.
      this.pos++;
      if (this.peek()?.k !== 'number') throw new LarkUnsupported(`a malformed priority on \`${name}\``);
      this.pos++;
    }
    this.expectOp(':', `\`${name}\` without \`:\``);
    if (this.doc.definitions.has(name)) throw new LarkUnsupported(`\`${name}\` defined twice`);
    this.doc.definitions.set(name, this.expansions());
    this.endOfStatement(`more after \`${name}\`'s definition`);
  }

  private expansions(): LarkSyntax {
    if (++this.depth > MAX_NESTING) throw new LarkUnsupported(`groups nested over ${MAX_NESTING} deep`);
    const options = [this.alias()];
    while (this.isOp('|')) {
      this.pos++;
      options.push(this.alias());
    }
    this.depth--;
    return options.length === 1 ? options[0]! : { t: 'alt', options };
  }

  /** An alternative; its `-> name` only names the tree's node. */
  private alias(): LarkSyntax {
    const items: LarkSyntax[] = [];
    for (;;) {
      const t = this.peek();
      if (!t || t.k === 'nl' || (t.k === 'op' && ['|', ')', ']', '->'].includes(t.v))) break;
      items.push(this.quantified(this.atom()));
    }
    if (this.isOp('->')) {
      this.pos++;
      this.name('`->` without a name');
    }
    return items.length === 1 ? items[0]! : { t: 'seq', items };
  }

  private atom(): LarkSyntax {
    const t = this.tokens[this.pos++];
    if (!t || t.k === 'nl') throw new LarkUnsupported('a definition that ends early');
    if (t.k === 'string') {
      if (this.isOp('..')) {
        this.pos++;
        const to = this.tokens[this.pos++];
        if (to?.k !== 'string') throw new LarkUnsupported('a malformed `".."` range');
        return { t: 'range', from: t.v, to: to.v };
      }
      // `"..."i` also matches other cases: writing it as spelt is one of the texts it matches.
      return { t: 'text', text: t.v };
    }
    if (t.k === 'regex') return { t: 'regex', source: t.v, flags: t.flags };
    if (t.k === 'name') {
      if (this.isOp('{')) throw new LarkUnsupported(`the template \`${t.v}{...}\``);
      return { t: 'name', name: t.v };
    }
    if (t.k === 'op' && (t.v === '(' || t.v === '[')) {
      const inner = this.expansions();
      this.expectOp(t.v === '(' ? ')' : ']', `an unclosed \`${t.v}\``);
      return t.v === '(' ? inner : { t: 'rep', item: inner, min: 0, max: 1 };
    }
    throw new LarkUnsupported(
      `\`${t.k === 'op' || t.k === 'number' || t.k === 'directive' ? t.v : t.k}\` where an item was expected`,
    );
  }

  private quantified(item: LarkSyntax): LarkSyntax {
    const t = this.peek();
    if (t?.k !== 'op') return item;
    if (t.v === '?' || t.v === '*' || t.v === '+') {
      this.pos++;
      return { t: 'rep', item, min: t.v === '+' ? 1 : 0, max: t.v === '?' ? 1 : Infinity };
    }
    if (t.v !== '~') return item;
    this.pos++;
    const count = () => {
      const n = this.tokens[this.pos++];
      if (n?.k !== 'number') throw new LarkUnsupported('a malformed `~` repetition');
      return Number(n.v);
    };
    const min = count();
    let max = min;
    if (this.isOp('..')) {
      this.pos++;
      max = count();
    }
    if (max < min || max > MAX_COUNT) throw new LarkUnsupported(`the repetition \`~ ${min}..${max}\``);
    return { t: 'rep', item, min, max };
  }
}
