import { MAX_GRAMMAR_BYTES } from './gbnf.js';
import { JsonGrammarEmitter, SizeCaps } from './grammar-emitter.js';
import { larkLeast } from './lark-grammar.js';
import { leastLength } from './pattern-grammar.js';
import { SchemaNode } from './schema-node.js';
import { fail } from './schema-problem.js';
import { JsonSchema, resolveSchema } from './schema-support.js';
import { FORMAT_LENGTHS } from './string-formats.js';

export interface JsonGrammar {
  /** GBNF text with a `root` rule, accepted by llama.cpp (node-llama-cpp `llama.createGrammar({grammar})`). */
  gbnf: string;
  /** Upper bound, in UTF-8 bytes, of any string the grammar accepts. */
  maxBytes: number;
}

/**
 * From generous to tight; every column is non-increasing, so maxBytes shrinks
 * down the ladder. Depth goes first because nested free values multiply sizes.
 * The top rungs are for the long free strings of tool calls (a file's content, a
 * patch, a shell command): a string's cap doubles from rung to rung, so the caps
 * chosen use at least half the room the budget leaves them.
 */
const LADDER: SizeCaps[] = [
  { chars: 16384, items: 8, keys: 8, digits: 15, depth: 3 },
  { chars: 8192, items: 8, keys: 8, digits: 15, depth: 3 },
  { chars: 4096, items: 8, keys: 8, digits: 15, depth: 3 },
  { chars: 2048, items: 8, keys: 8, digits: 15, depth: 3 },
  { chars: 1024, items: 8, keys: 8, digits: 15, depth: 3 },
  { chars: 512, items: 8, keys: 8, digits: 15, depth: 3 },
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

/** response_format json_object: any object. */
const JSON_OBJECT: SchemaNode = { kind: 'object', properties: [], additional: { kind: 'any' } };

/**
 * The grammar for `schema` (null: any JSON object, for response_format json_object) whose longest output fits `maxBytes`.
 * Chooses the most generous size caps that fit (string lengths, array items, extra object properties, number digits),
 * never below what the schema itself requires (minLength, minItems, required properties...).
 * Returns null when even the tightest caps cannot fit `maxBytes`. Throws UnsupportedSchemaError (exported, with `.problem: SchemaProblem`) for an unsupported schema.
 */
export function jsonSchemaGrammar(schema: JsonSchema | null, maxBytes: number): JsonGrammar | null {
  return grammarFor(schema === null ? JSON_OBJECT : resolveSchema(schema), maxBytes);
}

/**
 * The most characters of GBNF a schema's grammar may take, with its repetitions written out (see
 * grammarSize). A larger grammar (a schema with thousands of long enum values or properties, or of
 * strings of different lengths) is refused as too large to enforce: it would take too long to build
 * and to sample with.
 */
export const MAX_GRAMMAR_CHARS = 512 * 1024;

export { MAX_GRAMMAR_BYTES };

function grammarFor(node: SchemaNode, budget: number): JsonGrammar | null {
  const maxBytes = Math.min(budget, MAX_GRAMMAR_BYTES);
  // Checked before any grammar is written, so that a huge minItems or minLength costs nothing.
  if (leastBytes(node) > maxBytes) return null;
  // The ladder's maxBytes and sizes shrink down it: the first rung that fits both, found by halving.
  // A rung whose grammar is too large to enforce gives way to tighter ones, as one too long for the budget does.
  let lo = 0;
  let hi = LADDER.length - 1;
  let found: JsonGrammar | null = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const grammar = emitGrammar(node, LADDER[mid]);
    if (grammar.maxBytes <= maxBytes && grammarSize(grammar.gbnf) <= MAX_GRAMMAR_CHARS) {
      found = grammar;
      hi = mid - 1;
    } else lo = mid + 1;
  }
  return found ?? tightest(node, maxBytes);
}

/** The grammar of the tightest rung when it fits the budget; it is too large to enforce when it does not fit the size limit. */
function tightest(node: SchemaNode, maxBytes: number): JsonGrammar | null {
  const grammar = emitGrammar(node, LADDER[LADDER.length - 1]);
  return grammar.maxBytes <= maxBytes ? enforceable(grammar) : null;
}

/**
 * Smallest maxBytes for which jsonSchemaGrammar(schema, maxBytes) is not null (used to give a clear 400 when max_tokens is too small).
 * Throws UnsupportedSchemaError like jsonSchemaGrammar. A schema whose least output exceeds `limit` (the
 * largest budget there could be) gets that least size instead, without any grammar being written.
 */
export function minimumJsonBytes(schema: JsonSchema | null, limit = Infinity): number {
  const node = schema === null ? JSON_OBJECT : resolveSchema(schema);
  const least = leastBytes(node);
  if (least > Math.min(limit, MAX_GRAMMAR_BYTES)) return least;
  return enforceable(emitGrammar(node, LADDER[LADDER.length - 1])).maxBytes;
}

/**
 * A schema whose grammar fits `budget` bytes (and so tokens), for the check made before a request is
 * queued: throws UnsupportedSchemaError for a schema refused (invalid, unsatisfiable, too large) and
 * returns the least budget it needs when `budget` is too small, else null.
 */
export function schemaBudgetProblem(schema: JsonSchema, budget: number): number | null {
  const node = resolveSchema(schema);
  const least = leastBytes(node);
  if (least > Math.min(budget, MAX_GRAMMAR_BYTES)) return least;
  if (grammarFor(node, budget)) return null;
  return enforceable(emitGrammar(node, LADDER[LADDER.length - 1])).maxBytes;
}

function emitGrammar(node: SchemaNode, caps: SizeCaps): JsonGrammar {
  const emitter = new JsonGrammarEmitter(caps);
  const root = emitter.emit(node, 'value');
  return { gbnf: emitter.gbnf.toString(root.expr), maxBytes: root.max };
}

/** The grammar, unless it is past MAX_GRAMMAR_CHARS: then the schema is refused as too large. */
function enforceable(grammar: JsonGrammar): JsonGrammar {
  if (grammarSize(grammar.gbnf) > MAX_GRAMMAR_CHARS)
    fail(
      '',
      'schema size',
      `the schema's grammar would exceed ${MAX_GRAMMAR_CHARS} characters with its repetitions written out; it is too large to enforce`,
      'too_large',
    );
  return grammar;
}

/**
 * The size of a grammar as llama.cpp builds it: its text, and one more for each copy a repetition makes
 * (`x{m,n}` becomes m copies of x in the rule and n - m rules of one copy each). `char{0,1000}` is twelve
 * characters of text and a thousand rules to build.
 */
export function grammarSize(gbnf: string): number {
  let size = gbnf.length;
  for (const [, lo, hi] of gbnf.matchAll(/\{(\d+)(?:,(\d+))?\}/g)) size += Number(hi ?? lo);
  return size;
}

/**
 * A lower bound of any grammar's maxBytes for the node (what minItems, minLength and required properties
 * force), in arithmetic that saturates rather than loops: its cost is the size of the tree, whatever the counts.
 */
function leastBytes(node: SchemaNode, memo = new Map<SchemaNode, number>()): number {
  const known = memo.get(node);
  if (known !== undefined) return known;
  let least: number;
  switch (node.kind) {
    case 'any':
    case 'number':
      least = 1;
      break;
    case 'literal':
      least = node.json.length;
      break;
    case 'union':
      least = Math.min(...node.options.map((o) => leastBytes(o, memo)));
      break;
    case 'string':
      least = node.format
        ? 2 + FORMAT_LENGTHS[node.format][0]
        : 2 + (node.lark ? larkLeast(node.lark) : node.pattern ? leastLength(node.pattern) : node.minLength);
      break;
    case 'object': {
      // Members are key, colon and value, with a comma between two; members past the required ones are `"":0` at least.
      const required = node.properties.filter((p) => p.required);
      const members = Math.max(required.length, node.minKeys ?? 0);
      least = 2 + (members - required.length) * 4 + Math.max(0, members - 1);
      for (const p of required) least += p.keyJson.length + 1 + leastBytes(p.value, memo);
      break;
    }
    case 'array': {
      least = 2 + node.minItems;
      node.prefix.slice(0, node.minItems).forEach((n) => (least += leastBytes(n, memo)));
      if (node.minItems > node.prefix.length && node.items)
        least += (node.minItems - node.prefix.length) * leastBytes(node.items, memo);
      break;
    }
  }
  memo.set(node, least);
  return least;
}
