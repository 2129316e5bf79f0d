// Command-line parsing shared by the benches: unknown options and bad values exit 2 with the usage line.
import { parseArgs } from 'node:util';

/** @typedef {NonNullable<import('node:util').ParseArgsConfig['options']>} OptionsConfig */
/** @typedef {{ help: { type: 'boolean', short: 'h', default: false } }} HelpOption */
/**
 * The values `parseArgs` gives for `options` in strict mode: a string or boolean per option, never
 * `undefined` for one with a default.
 * @template {OptionsConfig} O
 * @typedef {ReturnType<typeof parseArgs<{ options: O & HelpOption, strict: true }>>['values']} CliValues
 */

/**
 * Parses process.argv with `options` (plus -h/--help, which prints `usage` and exits).
 * @template {OptionsConfig} O
 * @param {string} usage
 * @param {O} options
 * @returns {CliValues<O>}
 */
export function parseCli(usage, options) {
  /** @type {CliValues<O>} */
  let values;
  try {
    ({ values } = parseArgs({
      options: { ...options, help: { type: 'boolean', short: 'h', default: false } },
      strict: true,
    }));
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n${usage}`);
    process.exit(2);
  }
  if (/** @type {{ help?: boolean }} */ (values).help) {
    console.log(usage);
    process.exit(0);
  }
  return values;
}

/**
 * A positive integer command-line value, or exit 2 with a message naming the option.
 * @param {string} name
 * @param {string | undefined} raw
 * @returns {number}
 */
export function positiveInt(name, raw) {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`${name} must be a positive integer (got "${raw}")`);
    process.exit(2);
  }
  return n;
}
