import { describe, expect, it } from '@jest/globals';
import {
  APPLY_PATCH_ENVIRONMENT_GRAMMAR,
  APPLY_PATCH_GRAMMAR,
  isApplyPatch,
} from '../../../test/support/apply-patch-grammar.js';
import { jsonSchemaGrammar, LARK_KEYWORD, larkProblem, minimumJsonBytes, withoutLarkKeyword } from './index.js';
import { larkGrammar, LarkExpr } from './lark-grammar.js';
import type { Pattern } from './pattern-grammar.js';

/** A seeded generator, so a failing text can be found again. */
function random(seed: number): (n: number) => number {
  // mulberry32
  let state = seed >>> 0;
  return (n) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** A random text the translated grammar allows: each repeat a few times, each alternative by chance. */
function sample(e: LarkExpr, pick: (n: number) => number): string {
  switch (e.t) {
    case 'text':
      return e.text;
    case 'pattern':
      return samplePattern(e.pattern, pick);
    case 'seq':
      return e.items.map((i) => sample(i, pick)).join('');
    case 'alt':
      return sample(e.options[pick(e.options.length)]!, pick);
    case 'rep': {
      const n = e.min + pick(Math.min(e.max, e.min + 4) - e.min + 1);
      return Array.from({ length: n }, () => sample(e.item, pick)).join('');
    }
    case 'rule':
      return sample(e.body, pick);
  }
}

function samplePattern(p: Pattern, pick: (n: number) => number): string {
  switch (p.t) {
    case 'seq':
      return p.items.map((i) => samplePattern(i, pick)).join('');
    case 'alt':
      return samplePattern(p.options[pick(p.options.length)]!, pick);
    case 'set': {
      const chars = p.chars.flatMap((on, c) => (on ? [String.fromCharCode(c)] : []));
      return chars[pick(chars.length)]!;
    }
    case 'rep': {
      const n = p.min + pick(Math.min(p.max, p.min + 6) - p.min + 1);
      return Array.from({ length: n }, () => samplePattern(p.item, pick)).join('');
    }
  }
}

function samples(definition: string, count = 200): string[] {
  const grammar = larkGrammar(definition);
  return Array.from({ length: count }, (_, seed) => sample(grammar, random(seed + 1)));
}

const inputSchema = (definition: string) => ({
  type: 'object',
  properties: { input: { type: 'string', [LARK_KEYWORD]: definition } },
  required: ['input'],
  additionalProperties: false,
});

describe("Lark grammars, translated: Codex's apply_patch", () => {
  it.each([
    ['apply_patch', APPLY_PATCH_GRAMMAR],
    ['apply_patch with environments', APPLY_PATCH_ENVIRONMENT_GRAMMAR],
  ])('%s: every text the translation allows is a well-formed patch', (_name, definition) => {
    expect(larkProblem(definition)).toBeNull();
    const texts = samples(definition);
    for (const text of texts) if (!isApplyPatch(text)) throw new Error(`not a patch: ${JSON.stringify(text)}`);
    // The samples reach every kind of hunk, and the quotes and backslashes code lines carry.
    for (const marker of ['*** Add File: ', '*** Delete File: ', '*** Update File: ', '*** Move to: ', '@@', '"', '\\'])
      expect([marker, texts.some((t) => t.includes(marker))]).toEqual([marker, true]);
  });

  it('is held as the input string of a JSON grammar that fits the budget, lines escaped as JSON writes them', () => {
    for (const budget of [200, 1024, 4096, 20_000, 1e9]) {
      const grammar = jsonSchemaGrammar(inputSchema(APPLY_PATCH_GRAMMAR), budget)!;
      expect(grammar.maxBytes).toBeLessThanOrEqual(budget);
      expect(grammar.gbnf).toContain('"*** Begin Patch" lark-lf');
      expect(grammar.gbnf).toContain('lark-lf ::= "\\\\n"');
    }
    // A patch of a few files with many lines each, rather than many short files: files, lines, characters.
    const widths = (budget: number) => {
      const gbnf = jsonSchemaGrammar(inputSchema(APPLY_PATCH_GRAMMAR), budget)!.gbnf;
      const count = (re: RegExp) => Number(re.exec(gbnf)?.[1] ?? 1);
      return [
        count(/lark-start ::= lark-begin-patch lark-hunk(?:\{1,(\d+)\})? lark-end-patch/),
        count(/lark-add-hunk ::= .* lark-add-line\{1,(\d+)\}/),
        // A line's characters: up to a thousand as one count, past it as whole blocks of 128 (see repeat()).
        count(/lark-add-line ::= "\+" pattern-part\{0,(\d+)\} lark-lf/) *
          count(
            /lark-add-line ::= "\+" \(\(pattern-part\{128\}\)\{0,127\} pattern-part\{0,127\} \| \(pattern-part\{(128)\}\)\{128\}\)/,
          ) *
          count(
            /lark-add-line ::= "\+" \(\(pattern-part\{128\}\)\{0,127\} pattern-part\{0,127\} \| \(pattern-part\{128\}\)\{(128)\}\)/,
          ),
      ];
    };
    expect(widths(1e9)).toEqual([2, 32, 16_384]);
    expect(widths(20_000)).toEqual([2, 32, 128]);
    expect(widths(4096)).toEqual([1, 24, 64]);
    // The least patch: begin, one deleted file of one character, end.
    const least = '{"input":"*** Begin Patch\\n*** Delete File: x\\n*** End Patch"}'.length;
    expect(minimumJsonBytes(inputSchema(APPLY_PATCH_GRAMMAR))).toBeGreaterThanOrEqual(least);
    expect(jsonSchemaGrammar(inputSchema(APPLY_PATCH_GRAMMAR), least - 1)).toBeNull();
  });
});

describe('Lark grammars, translated: the subset', () => {
  it("brings in Lark's common terminals", () => {
    const definition = [
      'start: NUMBER ("," WS_INLINE? SIGNED_INT)* NEWLINE? CNAME ESCAPED_STRING',
      '%import common.NUMBER',
      '%import common (SIGNED_INT, WS_INLINE, NEWLINE)',
      '%import common.CNAME',
      '%import common.ESCAPED_STRING',
    ].join('\n');
    const shape =
      /^(\d+(\.\d*)?([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?)(,[ \t]*[-+]?\d+)*(\r?\n)*[A-Za-z_]\w*"([^"\\\n]|\\[^\n])*"$/;
    for (const text of samples(definition)) expect(text).toMatch(shape);
  });

  it('reads literals with escapes and flags, ranges, [ ], ?, ~ n and ~ n..m, aliases, priorities and comments', () => {
    const definition = [
      '// a comment',
      '?start: key "=\\t" value -> pair',
      '     | "\\"" DIGIT~2 "\\x41"',
      'key.2: "Key"i [ "-" ] LOWER~1..3',
      '!value: /[a-c]+/ ("!" | "?")?',
      'LOWER: "a".."e"',
      'DIGIT.1: "0".."9"',
    ].join('\n');
    for (const text of samples(definition)) expect(text).toMatch(/^(Key-?[a-e]{1,3}=\t[a-c]+[!?]?|"\d{2}A)$/);
  });

  it('lets the %ignored terminal stand between the tokens of rules, not inside terminals', () => {
    const definition = ['start: "a" WORD+ "b"', 'WORD: "x" "y"', '%import common.WS', '%ignore WS'].join('\n');
    const texts = samples(definition);
    for (const text of texts) expect(text).toMatch(/^a\s*xy(\s*xy)*\s*b$/);
    expect(texts.some((t) => /\s/.test(t))).toBe(true);
  });

  it.each([
    ['a recursive rule', 'start: "(" start ")" | "x"', 'recursive'],
    ['a template', 'start: _sep{"a", ","}\n_sep{x, s}: x (s x)*', 'template'],
    ['%declare', 'start: A\n%declare A', '%declare'],
    ['%override', 'start: "a"\n%override start: "b"', '%override'],
    ['a module other than common', 'start: NAME\n%import python.NAME', 'python'],
    ['a common terminal this server cannot write', 'start: C_COMMENT\n%import common.C_COMMENT', 'C_COMMENT'],
    ['a look-ahead', 'start: /(?=a)a/', 'expression'],
    ['a verbose expression', 'start: /a b/x', 'verbose'],
    ['a named group', 'start: /(?P<x>a)/', 'expression'],
    ['an undefined name', 'start: missing', 'undefined'],
    ['no start rule', 'begin: "a"', 'start'],
    ['a rule inside a terminal', 'start: A\nA: "a" b\nb: "b"', 'inside a terminal'],
    ['a malformed range', 'start: "ab".."z"', 'range'],
    ['a repetition past a thousand', 'start: ("a"?) ~ 100000000', 'repetition'],
  ])('refuses %s, naming it', (_what, definition, named) => {
    expect(larkProblem(definition)).toContain(named);
    // A string keeping such a grammar is left free: its grammar stays in the description.
    expect(jsonSchemaGrammar(inputSchema(definition), 1000)!.gbnf).not.toContain('lark');
  });

  it('refuses groups nested past the limit and long chains of rules without a deep stack', () => {
    expect(larkProblem(`start: ${'('.repeat(5000)}"a"${')'.repeat(5000)}`)).toContain('nested');
    const chain = Array.from({ length: 5000 }, (_, i) => `r${i}: r${i + 1}`).join('\n');
    expect(larkProblem(`start: r0\n${chain}\nr5000: "a"`)).toContain('chained');
  });

  it('leaves described, rather than refused, a grammar too large to translate or whose least text no reply holds', () => {
    expect(larkProblem(`start: ${'"a" '.repeat(3000)}`)).toContain('parts');
    expect(larkProblem(`start: ${'/[^a]/ '.repeat(1500)}`)).toContain('parts');
    // Each rule twice its next: the shortest text is 2^60 characters long.
    const doubling = Array.from({ length: 60 }, (_, i) => `r${i}: r${i + 1} r${i + 1}`).join('\n');
    expect(larkProblem(`start: r0\n${doubling}\nr60: "a"`)).toContain('shortest');
    expect(jsonSchemaGrammar(inputSchema(`start: r0\n${doubling}\nr60: "a"`), 1000)!.gbnf).not.toContain('lark');
  });
});

describe('withoutLarkKeyword', () => {
  it('leaves the grammar out of a schema shown to a prompt, and a property named like the keyword in', () => {
    const schema = inputSchema(APPLY_PATCH_GRAMMAR);
    expect(withoutLarkKeyword(schema)).toEqual({ ...schema, properties: { input: { type: 'string' } } });
    expect(schema.properties.input[LARK_KEYWORD]).toBe(APPLY_PATCH_GRAMMAR);
    const named = { type: 'object', properties: { [LARK_KEYWORD]: { type: 'string' } }, anyOf: [{ required: ['a'] }] };
    expect(withoutLarkKeyword(named)).toEqual(named);
  });
});
