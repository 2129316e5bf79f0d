// Requests `concurrency` at a time, as a client script sends a list through a pool of workers.

/**
 * Runs `run(0…count-1)` with at most `concurrency` at a time: each of `concurrency` loops takes the next
 * index as its last run ends, so the runs start in order. Resolves with the results by index.
 * @template T
 * @param {number} count
 * @param {number} concurrency
 * @param {(i: number) => Promise<T>} run
 * @returns {Promise<T[]>}
 */
export async function pool(count, concurrency, run) {
  /** @type {T[]} */
  const results = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await run(i);
      }
    }),
  );
  return results;
}
