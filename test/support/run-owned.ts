import type { SpawnOptions } from 'node:child_process';
import { spawnOwned } from './owned-processes.mjs';

/** How a program run to its end ended, and what it printed. */
export interface ProcessRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command args` as a process this test file owns, to its end (killed after `timeoutMs`), and gives
 * back its exit code and output; nothing here stops it earlier, whatever it prints.
 */
export function runOwned(
  command: string,
  args: readonly string[],
  options: Pick<SpawnOptions, 'cwd' | 'env'>,
  timeoutMs: number,
): Promise<ProcessRun> {
  return new Promise((ok, fail) => {
    const proc = spawnOwned(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
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
}
