import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** How to make the virtual environment by hand; `.ci/run` does the same from the local package store. */
export const PYTHON_VENV_HINT = 'python3 -m venv .venv && .venv/bin/pip install openai';

/**
 * The repository's `.venv` Python with the official `openai` package, which
 * `.ci/run` installs. Outside CI a machine without it skips the Python client
 * tests (and says so); in CI its absence is a failure.
 */
export function pythonWithOpenAi(): string | null {
  const python = resolve(import.meta.dirname, '../../.venv/bin/python');
  if (existsSync(python) && spawnSync(python, ['-c', 'import openai'], { stdio: 'ignore' }).status === 0) return python;
  if (process.env.CI)
    throw new Error(`.venv/bin/python with the openai package is required in CI: ${PYTHON_VENV_HINT}`);
  console.warn(`No .venv/bin/python with the openai package: skipping the Python client tests (${PYTHON_VENV_HINT})`);
  return null;
}
