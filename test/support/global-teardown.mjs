// After the last test file: stops the Redis the setup started, and checks that the run left no process
// running. Each file stops its own (stop-owned-after-file.mjs); one still running here was orphaned by a
// jest worker that died, and is killed now and reported, failing the run.
import { rmSync } from 'node:fs';
import { killLeftovers, REGISTRY_ENV } from './owned-processes.mjs';

/** @typedef {{ redis?: import('node:child_process').ChildProcess }} RunState */

export default async function globalTeardown() {
  const registry = process.env[REGISTRY_ENV];
  const left = registry ? killLeftovers(registry) : [];
  if (registry) rmSync(registry, { recursive: true, force: true });
  const { redis } = /** @type {RunState} */ (globalThis);
  if (redis && redis.exitCode === null) {
    const exited = new Promise((resolve) => redis.once('exit', resolve));
    redis.kill('SIGTERM');
    await exited;
  }
  if (left.length) {
    throw new Error(`The test run left ${left.length} process(es) running; they were killed:\n${left.join('\n')}`);
  }
}
