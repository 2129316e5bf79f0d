import type { StringFormat } from './schema-node.js';

/**
 * Fixed-shape grammars (string content, without quotes) for the supported
 * formats, written to pass ajv-formats' "full" checks: real calendar days
 * (February stops at 28 so leap years need no arithmetic), hours <= 23, and
 * RFC 3339 times that always carry a zone.
 */
const TWO_DIGIT_HOUR = '([01] [0-9] | "2" [0-3])';
const TIME = `${TWO_DIGIT_HOUR} ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,3})? ("Z" | [+-] ${TWO_DIGIT_HOUR} ":" [0-5] [0-9])`;
const DATE = [
  '[0-9]{4} "-" (',
  '("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01])',
  '| ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30")',
  '| "02-" ("0" [1-9] | "1" [0-9] | "2" [0-8]))',
].join(' ');

export const FORMAT_GRAMMARS: Record<StringFormat, string> = {
  date: DATE,
  time: TIME,
  'date-time': `${DATE} "T" ${TIME}`,
  uuid: '[0-9a-f]{8} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{12}',
};

/** Shortest and longest content (in characters, all ASCII) each format grammar accepts. */
export const FORMAT_LENGTHS: Record<StringFormat, [number, number]> = {
  date: [10, 10],
  time: [9, 18],
  'date-time': [20, 29],
  uuid: [36, 36],
};
