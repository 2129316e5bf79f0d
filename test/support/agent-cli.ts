import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { spawnOwned } from './owned-processes.mjs';

/** A coding agent's command-line program, as npm installs it into node_modules/.bin. */
export const agentBin = (name: 'claude' | 'codex'): string =>
  resolve(import.meta.dirname, '../../node_modules/.bin', name);

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a client's command line to its end with `env` added, in a home of its own (so no settings of the
 * machine's user reach it and nothing it writes stays), killed after `timeoutMs`.
 */
export async function runAgentCli(
  command: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<CliRun> {
  const home = mkdtempSync(join(os.tmpdir(), 'conveyor-agent-home-'));
  try {
    return await new Promise<CliRun>((ok, fail) => {
      const proc = spawnOwned(command, args, {
        cwd: home,
        env: { ...process.env, HOME: home, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      proc.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      proc.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
      proc.on('error', fail);
      proc.on('close', (code) => {
        clearTimeout(timer);
        ok({ code, stdout, stderr });
      });
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
