import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { runOwned, type ProcessRun } from './run-owned.js';

/** A coding agent's command-line program, as npm installs it into node_modules/.bin. */
export const agentBin = (name: 'claude' | 'codex'): string =>
  resolve(import.meta.dirname, '../../node_modules/.bin', name);

/**
 * Runs a client's command line to its end with `env` added, in a home of its own (so no settings of the
 * machine's user reach it and nothing it writes stays), killed after `timeoutMs`.
 */
export async function runAgentCli(
  command: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<ProcessRun> {
  const home = mkdtempSync(join(os.tmpdir(), 'conveyor-agent-home-'));
  try {
    return await runOwned(command, args, { cwd: home, env: { ...process.env, HOME: home, ...env } }, timeoutMs);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
