import type { LarkExpr } from './lark-grammar.js';
import type { Pattern } from './pattern-grammar.js';

/**
 * The supported part of JSON Schema, resolved into a tree the grammar emitter
 * walks. Every node accepts at least one value: unsatisfiable schemas are
 * refused while building the tree, so the grammar can never be empty.
 */
export type SchemaNode =
  | { kind: 'any' }
  /** Compact, ASCII-only JSON text of a fixed value (const, enum, true/false/null). */
  | { kind: 'literal'; json: string }
  | { kind: 'union'; options: SchemaNode[] }
  | {
      kind: 'string';
      minLength: number;
      maxLength: number | null;
      format: StringFormat | null;
      /** The schema's `pattern`, where the grammar can write it (then the lengths are 0 and null). */
      pattern?: Pattern;
      /** The Lark grammar its text follows (the schema's LARK_KEYWORD), where it can be written (lengths then 0 and null). */
      lark?: LarkExpr;
    }
  | NumberNode
  | ObjectNode
  | ArrayNode;

/**
 * A number the grammar writes without exponent: its sign held (`positive`: 1 or more, for integers),
 * its integer part at most `digits` digits long when the schema's bounds say so (null: the size caps
 * decide). Finer bounds are checked on the result.
 */
export interface NumberNode {
  kind: 'number';
  integer: boolean;
  sign: 'any' | 'nonNegative' | 'positive' | 'negative';
  digits: number | null;
  /**
   * Inclusive whole-number bounds, below 1e15 in magnitude: an integer's exactly; a number's (then both
   * non-negative) as the numbers from `lo` up to but not including `hi` with any fraction, and `hi` itself.
   */
  range?: [number, number];
}

export interface ObjectNode {
  kind: 'object';
  properties: PropertyNode[];
  /** Schema of extra properties under free-form keys; null: emit none. */
  additional: SchemaNode | null;
  /** Free-form members, when `additional` is set: at least `minKeys`, at most `maxKeys` (null: the size caps decide). */
  minKeys?: number;
  maxKeys?: number | null;
  /** Rule-name hint ($defs name) for readable grammars. */
  name?: string;
}

export interface PropertyNode {
  /** ASCII-only JSON text of the key, quotes included. */
  keyJson: string;
  value: SchemaNode;
  required: boolean;
}

export interface ArrayNode {
  kind: 'array';
  prefix: SchemaNode[];
  /** Schema of items after the prefix; null: none. */
  items: SchemaNode | null;
  minItems: number;
  maxItems: number | null;
  name?: string;
}

export const STRING_FORMATS = ['date', 'time', 'date-time', 'uuid'] as const;
export type StringFormat = (typeof STRING_FORMATS)[number];

/**
 * JSON.stringify with every non-ASCII character escaped. llama.cpp's grammar
 * matcher accepts some ill-formed UTF-8 (overlong forms) for a non-ASCII code
 * point, so literals and free text are kept to ASCII where any byte sequence
 * the model can produce is well-formed.
 */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
