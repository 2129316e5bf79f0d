import { existsSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';

/** Throws, saying what to run, unless `dist` holds a build of the API, the worker and the model generator. */
/** @param {string} dist */
export function assertBuilt(dist) {
  for (const f of ['apps/api/src/main.js', 'apps/worker/src/main.js', 'libs/gguf/src/index.js']) {
    if (!existsSync(resolve(dist, f))) throw new Error(`${resolve(dist, f)} is missing: run \`npm run build\` first`);
  }
}

/**
 * The first lines of a report's header: the command as run, when, and on what machine.
 * @param {string} script the bench's path from the repository root
 * @returns {string[]}
 */
export function runHeader(script) {
  const cpus = os.cpus();
  return [
    `command: \`${['node', script, ...process.argv.slice(2)].join(' ')}\``,
    `date: ${new Date().toISOString()}`,
    `machine: ${cpus.length} CPU(s) (${cpus[0]?.model?.trim() ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.arch()}, node ${process.version}`,
  ];
}

/** The load average, as `1 / 5 / 15 min` figures. */
export const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
