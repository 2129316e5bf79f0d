// What the platform's command-line clients (npm run batch, npm run keys) share: a failure they explain in
// one line with its own exit code, the command line read against their usage, and the frame that turns
// whatever `main` ends with into an exit code, never a stack trace.
import { parseArgs } from 'node:util';

export class CliError extends Error {
  /**
   * @param {string} message
   * @param {number} [exitCode] 2 for a wrong command line, 1 for anything else
   */
  constructor(message, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/**
 * The command line read with `options` (positionals allowed); a line that does not parse is a CliError
 * that prints `usage` after what was wrong.
 * @template {import('node:util').ParseArgsConfig['options']} T
 * @param {T} options
 * @param {string} usage
 */
export function readCommandLine(options, usage) {
  try {
    return parseArgs({ allowPositionals: true, options });
  } catch (err) {
    throw new CliError(`${err instanceof Error ? err.message : String(err)}\n${usage}`, 2);
  }
}

/**
 * Runs `main` and exits with its code; a CliError prints its message, anything else one line under `name`.
 * @param {string} name
 * @param {() => Promise<number>} main
 */
export async function runCli(name, main) {
  try {
    process.exit(await main());
  } catch (err) {
    if (err instanceof CliError) {
      console.error(err.message);
      process.exit(err.exitCode);
    }
    // Not a failure this client knows how to explain: still one line, never a stack trace.
    console.error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
