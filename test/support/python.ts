import { expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { runOwned } from './run-owned.js';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** How to make the virtual environment by hand; `.ci/run` does the same from the local package store. */
export const PYTHON_VENV_HINT = 'python3 -m venv .venv && .venv/bin/pip install openai anthropic';

/**
 * The repository's `.venv` Python with the official client package `module` (`openai`, `anthropic`),
 * which `.ci/run` installs. Outside CI a machine without it skips the Python client tests (and says
 * so); in CI its absence is a failure.
 */
function pythonWith(module: string): string | null {
  const python = resolve(import.meta.dirname, '../../.venv/bin/python');
  if (existsSync(python) && spawnSync(python, ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0)
    return python;
  if (process.env.CI)
    throw new Error(`.venv/bin/python with the ${module} package is required in CI: ${PYTHON_VENV_HINT}`);
  console.warn(
    `No .venv/bin/python with the ${module} package: skipping the Python ${module} client tests (${PYTHON_VENV_HINT})`,
  );
  return null;
}

export const pythonWithOpenAi = (): string | null => pythonWith('openai');
export const pythonWithAnthropic = (): string | null => pythonWith('anthropic');

/** One line a check script prints: `{"check": name, "ok": bool, "detail": ...}`. */
export interface CheckLine {
  check: string;
  ok: boolean;
  detail: unknown;
}

export interface CheckRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The check lines in the order printed; other output is left out. */
  lines: CheckLine[];
}

const isCheckLine = (v: unknown): v is CheckLine =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Partial<CheckLine>).check === 'string' &&
  typeof (v as Partial<CheckLine>).ok === 'boolean';

const parseLine = (line: string): CheckLine | null => {
  try {
    const value: unknown = JSON.parse(line);
    return isCheckLine(value) ? value : null;
  } catch {
    return null;
  }
};

/**
 * Runs a check script to its end (killed after `timeoutMs`); such a script reports every check whatever
 * fails, so nothing here stops it early.
 */
export async function runCheckScript(
  python: string,
  script: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<CheckRun> {
  const run = await runOwned(python, [script], { env: { ...process.env, ...env } }, timeoutMs);
  const lines = run.stdout
    .split('\n')
    .map(parseLine)
    .filter((l): l is CheckLine => l !== null);
  return { ...run, lines };
}

/**
 * The tests every check script gets, in the describe that runs it: all of `checks` ran once, in order,
 * and the script exited 0; then each check passed. `run` gives the finished run (set in beforeAll).
 */
export function itPassesEveryCheck(script: string, checks: string[], run: () => CheckRun): void {
  it('runs every check once, in order, and exits 0', () => {
    const { lines, code, stderr } = run();
    if (stderr) console.warn(`${script} wrote to stderr:\n${stderr}`);
    expect({ checks: lines.map((l) => l.check), code }).toEqual({ checks, code: 0 });
  });

  it.each(checks)('passes %s', (name) => {
    const { lines, code, stdout, stderr } = run();
    const line = lines.find((l) => l.check === name);
    if (!line) throw new Error(`No line for ${name}; ${script} exited ${code}:\n${stdout}${stderr}`);
    // On failure the diff shows the script's detail: the exception and the line it came from.
    expect(line).toEqual({ check: name, ok: true, detail: line.detail });
  });
}
