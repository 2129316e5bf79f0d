// A liveness probe as an orchestrator runs one: GET a URL every so often for the whole of a run, and keep
// how long each answer took. It runs in a thread of its own, so that the bench's own work on its main
// thread (writing or reading a large file) delays neither the probe's requests nor its clock.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

/**
 * One probe: when it was sent (`Date.now()`), how long the answer took in ms, and whether it was a 200.
 * @typedef {{ at: number, ms: number, ok: boolean }} Probe
 */

/** @typedef {{ healthProbe: { url: string, everyMs: number, timeoutMs: number } }} ProbeData */

export class HealthProbe {
  /**
   * Starts probing `url` every `everyMs` (the next request `everyMs` after the last one was sent, or as
   * soon as it is answered when it took longer); a request unanswered after `timeoutMs` counts as failed.
   * @param {string} url
   * @param {{ everyMs?: number, timeoutMs?: number }} [options]
   */
  constructor(url, { everyMs = 250, timeoutMs = 30_000 } = {}) {
    /** @type {ProbeData} */
    const data = { healthProbe: { url, everyMs, timeoutMs } };
    this.worker = new Worker(new URL(import.meta.url), { workerData: data });
    /** @type {Promise<Probe[]>} */
    this.result = new Promise((ok, fail) => {
      this.worker.once('message', (/** @type {Probe[]} */ probes) => ok(probes));
      this.worker.once('error', fail);
      this.worker.once('exit', (code) => fail(new Error(`the health probe's thread exited (${code})`)));
    });
    this.result.catch(() => undefined);
  }

  /**
   * Stops probing; resolves with every probe, in the order sent.
   * @returns {Promise<Probe[]>}
   */
  async stop() {
    this.worker.postMessage('stop');
    const probes = await this.result;
    await this.worker.terminate();
    return probes;
  }
}

/**
 * The probe's thread: probes until told to stop, then posts them all back.
 * @param {ProbeData['healthProbe']} options
 */
async function probeLoop({ url, everyMs, timeoutMs }) {
  const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
  let stopping = false;
  /** @type {() => void} */
  let wake = () => undefined;
  port.on('message', () => {
    stopping = true;
    wake();
  });
  /** @type {Probe[]} */
  const probes = [];
  while (!stopping) {
    const at = Date.now();
    const t0 = performance.now();
    let ok;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
      await res.arrayBuffer();
      ok = res.status === 200;
    } catch {
      ok = false;
    }
    const ms = performance.now() - t0;
    probes.push({ at, ms, ok });
    if (stopping) break;
    await new Promise((r) => {
      wake = () => r(undefined);
      setTimeout(wake, Math.max(0, everyMs - ms));
    });
  }
  port.postMessage(probes);
}

if (!isMainThread && /** @type {Partial<ProbeData> | null} */ (workerData)?.healthProbe)
  await probeLoop(/** @type {ProbeData} */ (workerData).healthProbe);
