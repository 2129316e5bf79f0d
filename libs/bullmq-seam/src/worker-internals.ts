import type { Worker } from 'bullmq';

/** A BullMQ 6.7.0 worker's private parts this platform steers (checked at start-up by `checkBullmqSeam`). */
interface WorkerInternals {
  id: string;
  /** The fetch loop's queue while the worker runs: adding a settled promise wakes it, as `resume()` does. */
  mainLoopQueue: { add(promise: Promise<unknown>): void } | null;
}

const internals = (worker: Worker): WorkerInternals => worker as unknown as WorkerInternals;

/**
 * Names the lock tokens a BullMQ worker hands out after this process: it makes each token
 * `<worker id>:<n>` as it fetches, from an id it draws at random. With the process's instance in the id,
 * the workers that take a dead process's jobs over recognise them by their lock alone. Before `run()`.
 */
export function claimTokens(worker: Worker, id: string): void {
  internals(worker).id = id;
}

/**
 * Wakes a running worker's fetch loop, so that a raised `concurrency` takes a job at once: on its own,
 * a worker looks again only when one of its jobs ends. Nothing while it does not run.
 */
export function wakeFetchLoop(worker: Worker): void {
  internals(worker).mainLoopQueue?.add(Promise.resolve());
}
