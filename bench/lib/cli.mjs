// Command-line parsing shared by the benches: unknown options and bad values exit 2 with the usage line.
import { parseArgs } from 'node:util';

/** Parses process.argv with `options` (plus -h/--help, which prints `usage` and exits). */
export function parseCli(usage, options) {
  let values;
  try {
    ({ values } = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h', default: false } }, strict: true }));
  } catch (err) {
    console.error(`${err.message}\n${usage}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  return values;
}

/** A positive integer command-line value, or exit 2 with a message naming the option. */
export function positiveInt(name, raw) {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`${name} must be a positive integer (got "${raw}")`);
    process.exit(2);
  }
  return n;
}
