import { createRequire } from 'node:module';
import { Worker } from 'bullmq';

/**
 * The BullMQ release this seam was written against. Everything here reads or writes what BullMQ does
 * not publish (its keys, its job hash's fields, its scripts' rules, a worker's private fields), as that
 * release has them; package.json pins it exactly, and `checkBullmqSeam` refuses any other at start-up.
 */
export const SEAM_BULLMQ_VERSION = '6.7.0';

/** The version of the BullMQ package this process loads. */
export function installedBullmqVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('bullmq/package.json') as { version: string }).version;
}

/**
 * What the seam assumes of a BullMQ worker beyond its typings, checked on its code rather than on a
 * running worker: the fetch loop it keeps in `mainLoopQueue`, and lock tokens made from `this.id` each
 * time a job is fetched (so an id set before the worker runs names every token it hands out).
 */
const WORKER_ASSUMPTIONS: ReadonlyArray<{ what: string; holds: (worker: typeof Worker) => boolean }> = [
  {
    what: 'a fetch loop in mainLoopQueue',
    holds: (w) => /this\.mainLoopQueue\s*=/.test(String(w)) && /mainLoopQueue/.test(methodSource(w, 'mainLoop')),
  },
  {
    what: 'lock tokens made from the worker id as jobs are fetched',
    holds: (w) => /`\$\{this\.id\}:\$\{/.test(methodSource(w, 'mainLoop')),
  },
];

function methodSource(worker: typeof Worker, name: string): string {
  const method = (worker.prototype as unknown as Record<string, unknown>)[name];
  return typeof method === 'function' ? String(method) : '';
}

/**
 * Why this process must not run with the BullMQ it loads, in one line, or null when it may: another
 * version than the seam's, or a worker whose private parts the seam uses are not there.
 */
export function checkBullmqSeam(installed = installedBullmqVersion(), worker: typeof Worker = Worker): string | null {
  if (installed !== SEAM_BULLMQ_VERSION) {
    return (
      `BullMQ ${installed} is installed, but the queue code was written for BullMQ ${SEAM_BULLMQ_VERSION} ` +
      `(libs/bullmq-seam reads its internals): install ${SEAM_BULLMQ_VERSION}, or port the seam first.`
    );
  }
  const missing = WORKER_ASSUMPTIONS.filter((a) => !a.holds(worker)).map((a) => a.what);
  if (missing.length) {
    return `BullMQ ${installed}'s Worker lacks what libs/bullmq-seam uses: ${missing.join('; ')}.`;
  }
  return null;
}
