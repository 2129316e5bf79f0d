// libuv reads UV_THREADPOOL_SIZE once, when its pool first starts, which Node's module loader does
// before any bench code runs: a bench that loads llama.cpp in process must be started with it set.
import { spawnSync } from 'node:child_process';

/** The worker's setting (one libuv thread for one deployment), for workers a bench starts. */
export const WORKER_THREADPOOL_SIZE = process.env.UV_THREADPOOL_SIZE || '1';

/**
 * Runs this bench again with UV_THREADPOOL_SIZE set as the worker has it, unless it is set already,
 * so the engine in process decodes and samples as in a worker.
 */
export function rerunWithWorkerThreadpool() {
  if (process.env.UV_THREADPOOL_SIZE) return;
  const child = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, UV_THREADPOOL_SIZE: WORKER_THREADPOOL_SIZE },
  });
  process.exit(child.status ?? 1);
}
