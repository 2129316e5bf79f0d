/**
 * JSON Schema -> bounded llama.cpp GBNF. Output is compact JSON whose longest
 * form fits a byte budget, so it always completes within that many tokens.
 * Deliberate narrowings (all valid under JSON Schema): objects carry only
 * declared properties unless they are pure maps; oneOf is enforced as anyOf
 * (branches should be disjoint); strings are printable ASCII plus escapes,
 * with `\uXXXX` for anything else.
 */
export { findUnsupportedSchemaFeature, UnsupportedSchemaError } from './schema-support.js';
export type { JsonSchema, SchemaProblem, SchemaProblemKind } from './schema-support.js';
export {
  jsonSchemaGrammar,
  MAX_GRAMMAR_BYTES,
  MAX_GRAMMAR_CHARS,
  minimumJsonBytes,
  schemaBudgetProblem,
} from './json-grammar.js';
export { checkJson } from './json-check.js';
export { resultCheck } from './result-check.js';
export { MAX_SCHEMA_PARTS } from './schema-keywords.js';
export type { JsonGrammar } from './json-grammar.js';
export { gbnfLiteral } from './gbnf.js';
export { isObject } from './json-values.js';
export { LARK_KEYWORD, larkProblem, withoutLarkKeyword } from './lark-grammar.js';
