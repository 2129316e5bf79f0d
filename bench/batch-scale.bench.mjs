#!/usr/bin/env node
// One batch of a million chat lines through the Files and Batches API, on simulated workers (engine:
// simulated, no model), to see what the platform does at that size: how long it takes to accept and to
// validate the file, how many lines a second it then runs, how much memory the API and Redis take on the
// way, whether /health stays quick throughout, and whether every custom_id comes back exactly once.
//   node bench/batch-scale.bench.mjs [--lines 1000000] [--workers 4] [--sequences 16] [--out batch-scale]
// With --cancel-after-s N the batch is cancelled N seconds after it starts running: a shorter run that still
// takes the whole file in, plans it, runs for a while and writes every line that did not run as cancelled.
//
// The input is written to disk as a stream and uploaded as one (never held in memory), its lines short
// chat requests under a handful of system prompts (so the batch plan groups them), each with its own
// custom_id, a few % of them a greedy request asked again (which the plan folds into the first). The
// output and error files are read back as streams and each custom_id ticked off in a bitmap by its line
// number. It starts a redis-server of its own, so its memory and keys are the platform's alone.
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, openAsBlob, rmSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { HealthProbe } from './lib/health-probe.mjs';
import { Children, freePort, stopChildrenOnSignal, waitForLiveWorkers } from './lib/processes.mjs';
import { machineBusyMs, processCpuMs, processMemory, RedisNodes, redisDelta } from './lib/redis-info.mjs';
import { assertBuilt, runHeader } from './lib/report.mjs';
import { pct, sleep, table } from './lib/stats.mjs';
import { seededWords } from './lib/words.mjs';

/** @import { Probe } from './lib/health-probe.mjs' */
/** @import { ReadyChild } from './lib/processes.mjs' */

const USAGE = `usage: node bench/batch-scale.bench.mjs [--lines 1000000] [--workers 4] [--sequences 16] [--tokens 4]
  [--ttft-ms 10] [--tpot-ms 2] [--prompts 6] [--repeat-pct 3] [--cancel-after-s N] [--inflight N] [--tick-ms N] [--redis-port N] [--out batch-scale]
  [--dist dist]`;
const options = parseCli(USAGE, {
  lines: { type: 'string', default: '1000000' },
  workers: { type: 'string', default: '4' },
  sequences: { type: 'string', default: '16' },
  tokens: { type: 'string', default: '4' },
  'ttft-ms': { type: 'string', default: '10' },
  'tpot-ms': { type: 'string', default: '2' },
  prompts: { type: 'string', default: '6' },
  'repeat-pct': { type: 'string', default: '3' },
  'cancel-after-s': { type: 'string', default: '' },
  inflight: { type: 'string', default: '' },
  'tick-ms': { type: 'string', default: '' },
  'redis-port': { type: 'string', default: '' },
  out: { type: 'string', default: 'batch-scale' },
  dist: { type: 'string', default: 'dist' },
});
const LINES = positiveInt('--lines', options.lines);
const WORKERS = positiveInt('--workers', options.workers);
const SEQUENCES = positiveInt('--sequences', options.sequences);
const TOKENS = positiveInt('--tokens', options.tokens);
const TTFT_MS = positiveInt('--ttft-ms', options['ttft-ms']);
const TPOT_MS = positiveInt('--tpot-ms', options['tpot-ms']);
const PROMPTS = positiveInt('--prompts', options.prompts);
const CANCEL_AFTER_MS = options['cancel-after-s']
  ? positiveInt('--cancel-after-s', options['cancel-after-s']) * 1000
  : 0;
const REPEAT_PCT = Number(options['repeat-pct']);
if (!(REPEAT_PCT >= 0 && REPEAT_PCT < 50)) {
  console.error(`--repeat-pct must be a number from 0 to below 50 (got "${options['repeat-pct']}")`);
  process.exit(2);
}
/** A batch not a line further after this long is stuck: the run fails instead of waiting for ever. */
const STALL_MS = 300_000;
const DEPLOYMENT = 'sim';

const root = resolve(import.meta.dirname, '..');
const dist = resolve(root, options.dist);
const RESULTS_DIR = resolve(root, 'bench/results');
assertBuilt(dist);

// The limits a batch this size must be let through, and the most the configuration accepts for each.
/** @type {typeof import('../libs/config/src/env/batches.vars.js')} */
const { BATCHES_VARS } = await import(pathToFileURL(join(dist, 'libs/config/src/env/batches.vars.js')).href);
const { BATCH_MAX_LINES, BATCH_MAX_FILE_BYTES } = BATCHES_VARS;
if (LINES > BATCH_MAX_LINES.max) {
  console.error(
    `${LINES} lines are more than the configuration lets a batch have: BATCH_MAX_LINES is at most ${BATCH_MAX_LINES.max} ` +
      `(libs/config/src/env/batches.vars.ts).`,
  );
  process.exit(2);
}

// ---- the input: short chat lines under a handful of system prompts, a few % asked again -------------------

const SYSTEM_PROMPTS = [
  'You are a support agent for a parcel company. Answer in one short sentence, politely, and never promise a delivery date.',
  'You classify customer messages. Reply with one word: billing, delivery, returns, account or other.',
  'You translate the user message into plain French. Keep names and numbers as they are; add nothing.',
  'You are a careful editor. Rewrite the user text so that it is shorter and clearer, keeping its meaning.',
  'You extract the order number and the city from the message and answer as JSON with the keys order and city.',
  'You are a cheerful assistant for a bakery. Suggest one pastry that fits what the customer describes.',
  'You summarise the message in at most ten words for a ticket title, without punctuation at the end.',
  'You decide whether the message is urgent. Answer yes or no, then one reason of at most eight words.',
];
const WORDS = (
  'parcel order late driver door city refund box damaged address weekend invoice card account label ' +
  'return window morning neighbour code phone tracking warehouse missing delivery courier'
).split(' ');

/** Whether line `i` repeats an earlier line's request: about REPEAT_PCT % of the lines, spread evenly. */
const isRepeat = (/** @type {number} */ i) => i > 0 && (Math.imul(i, 2654435761) >>> 0) % 10_000 < REPEAT_PCT * 100;
/** The line whose request line `i` sends: its own, or for a repeat the first line that sent it. */
const source = (/** @type {number} */ i) => {
  while (isRepeat(i)) i >>= 1;
  return i;
};
/** The body of line `j`'s own request: greedy, so a repeat of it may be run once for both. */
const body = (/** @type {number} */ j) => ({
  model: DEPLOYMENT,
  messages: [
    {
      role: 'system',
      content: SYSTEM_PROMPTS[(j % PROMPTS) % SYSTEM_PROMPTS.length] + (PROMPTS > 8 ? ` (${j % PROMPTS})` : ''),
    },
    { role: 'user', content: `Ticket ${j}: ${seededWords(WORDS, j, 8)}` },
  ],
  max_tokens: TOKENS,
  temperature: 0,
});
const customId = (/** @type {number} */ i) => `s-${i}`;
const CUSTOM_ID = /"custom_id":"s-(\d+)"/;

/**
 * Writes the batch's input file, a thousand lines at a time, waiting whenever the disk falls behind.
 * @param {string} path
 * @returns {Promise<{ bytes: number, repeats: number }>}
 */
async function writeInput(path) {
  const out = createWriteStream(path);
  let repeats = 0;
  /** @type {string[]} */
  let chunk = [];
  for (let i = 0; i < LINES; i++) {
    if (isRepeat(i)) repeats++;
    chunk.push(
      JSON.stringify({ custom_id: customId(i), method: 'POST', url: '/v1/chat/completions', body: body(source(i)) }),
    );
    if (chunk.length === 1000 || i === LINES - 1) {
      if (!out.write(chunk.join('\n') + '\n')) await once(out, 'drain');
      chunk = [];
    }
  }
  out.end();
  await finished(out);
  return { bytes: statSync(path).size, repeats };
}

// ---- what is sampled while it runs -------------------------------------------------------------------------

/**
 * One reading a second: the batch's progress, the API's memory, Redis's memory and keys.
 * @typedef {{ s: number, status: string, done: number, apiRssMiB: number, redisMiB: number, keys: number }} Sample
 */

class Sampler {
  /**
   * @param {RedisNodes} redis
   * @param {number | undefined} apiPid
   * @param {number} t0 `Date.now()` the timeline counts from
   */
  constructor(redis, apiPid, t0) {
    this.redis = redis;
    this.apiPid = apiPid;
    this.t0 = t0;
    /** @type {Sample[]} */
    this.samples = [];
    this.peak = { apiRss: 0, redisMemory: 0, keys: 0 };
    /** what the batch poller saw last */
    this.status = 'uploading';
    this.done = 0;
    this.stopping = false;
    this.loop = this.run();
    this.loop.catch(() => undefined);
  }

  async run() {
    while (!this.stopping) {
      const memory = processMemory(this.apiPid);
      const [redisMemory, keys] = await Promise.all([this.redis.usedMemory(), this.redis.keyCount()]);
      if (memory) this.peak.apiRss = Math.max(this.peak.apiRss, memory.rss);
      this.peak.redisMemory = Math.max(this.peak.redisMemory, redisMemory);
      this.peak.keys = Math.max(this.peak.keys, keys);
      this.samples.push({
        s: Math.round((Date.now() - this.t0) / 100) / 10,
        status: this.status,
        done: this.done,
        apiRssMiB: Math.round((memory?.rss ?? 0) / 2 ** 20),
        redisMiB: Math.round((redisMemory / 2 ** 20) * 10) / 10,
        keys,
      });
      await sleep(1000);
    }
  }

  async stop() {
    this.stopping = true;
    await this.loop;
  }
}

/**
 * CPU ms used so far by each part of the run, and by the whole machine.
 * @param {{ api: ReadyChild, workers: ReadyChild[], redisPid: number | undefined }} parts
 */
function cpuReading({ api, workers, redisPid }) {
  const bench = process.cpuUsage();
  return {
    api: processCpuMs(api.proc.pid),
    workers: workers.reduce((sum, w) => sum + processCpuMs(w.proc.pid), 0),
    redis: processCpuMs(redisPid),
    bench: (bench.user + bench.system) / 1000,
    machine: machineBusyMs(),
  };
}

/**
 * Cores each part kept busy between two readings `ms` apart; `others` is what the rest of the machine used.
 * @param {ReturnType<typeof cpuReading>} a
 * @param {ReturnType<typeof cpuReading>} b
 * @param {number} ms
 */
function coresBusy(a, b, ms) {
  const share = (/** @type {keyof typeof a} */ k) => (b[k] - a[k]) / ms;
  const ours = share('api') + share('workers') + share('redis') + share('bench');
  return {
    api: share('api'),
    workers: share('workers'),
    redis: share('redis'),
    bench: share('bench'),
    others: Math.max(0, share('machine') - ours),
    machine: share('machine'),
  };
}

// ---- the output check --------------------------------------------------------------------------------------

/** Which line numbers' custom_ids the output has given back so far, one bit each. */
class Tally {
  /** @param {number} lines */
  constructor(lines) {
    this.lines = lines;
    this.bits = new Uint8Array(Math.ceil(lines / 8));
    this.seen = 0;
    this.duplicates = 0;
    this.unknown = 0;
  }

  /** @param {string} line one line of an output or error file */
  add(line) {
    const match = CUSTOM_ID.exec(line);
    const i = match ? Number(match[1]) : -1;
    if (!(i >= 0 && i < this.lines)) return void this.unknown++;
    const bit = 1 << (i & 7);
    if (this.bits[i >> 3] & bit) return void this.duplicates++;
    this.bits[i >> 3] |= bit;
    this.seen++;
  }

  /** The first `n` line numbers whose custom_id did not come back. */
  missing(n = 5) {
    /** @type {number[]} */
    const out = [];
    for (let i = 0; i < this.lines && out.length < n; i++) if (!(this.bits[i >> 3] & (1 << (i & 7)))) out.push(i);
    return out;
  }
}

/**
 * Reads a file's content from the API as a stream, one line at a time, into `tally`.
 * @param {string} base
 * @param {string} fileId
 * @param {Tally} tally
 * @returns {Promise<{ lines: number, bytes: number, succeeded: number }>}
 */
async function readResults(base, fileId, tally) {
  const res = await fetch(`${base}/v1/files/${fileId}/content`);
  if (res.status !== 200 || !res.body) throw new Error(`GET /v1/files/${fileId}/content: ${res.status}`);
  const input = Readable.fromWeb(/** @type {import('node:stream/web').ReadableStream<Uint8Array>} */ (res.body));
  let bytes = 0;
  input.on('data', (/** @type {Buffer} */ chunk) => (bytes += chunk.length));
  let lines = 0;
  let succeeded = 0;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    if (!line) continue;
    lines++;
    if (line.includes('"status_code":200,') && line.endsWith('"error":null}')) succeeded++;
    tally.add(line);
  }
  return { lines, bytes, succeeded };
}

// ---- the run -----------------------------------------------------------------------------------------------

/**
 * @typedef {{ status: string, errors: { data: Array<{ code: string, message: string }> } | null,
 *   request_counts: { total: number, completed: number, failed: number }, output_file_id: string | null,
 *   error_file_id: string | null, in_progress_at: number | null, finalizing_at: number | null,
 *   completed_at: number | null, plan?: unknown }} Batch
 */

const TERMINAL = ['completed', 'failed', 'expired', 'cancelled'];
const sec = (/** @type {number} */ ms) => (ms / 1000).toFixed(1);
const mib = (/** @type {number} */ bytes) => (bytes / 2 ** 20).toFixed(1);
const share = (/** @type {number} */ x) => `${(100 * x).toFixed(0)}%`;
const int = (/** @type {number} */ n) => Math.round(n).toLocaleString('en-US');
const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const children = new Children(root);
const work = mkdtempSync(join(os.tmpdir(), 'conveyor-batch-scale-'));
stopChildrenOnSignal(async () => rmSync(work, { recursive: true, force: true }));

let redis = /** @type {RedisNodes | null} */ (null);
/** @type {HealthProbe | null} */
let probe = null;
/** @type {Sampler | null} */
let sampler = null;
try {
  const header = [
    ...runHeader('bench/batch-scale.bench.mjs'),
    `load average at the start: ${loadAverage()}`,
    `simulated deployment: ${WORKERS} worker(s) × ${SEQUENCES} sequences, first token ${TTFT_MS} ms then one each ${TPOT_MS} ms, ` +
      `${TOKENS}-token replies`,
  ];
  console.log(header.join('\n'));

  const input = join(work, 'input.jsonl');
  const g0 = Date.now();
  const { bytes, repeats } = await writeInput(input);
  const generateMs = Date.now() - g0;
  if (bytes > BATCH_MAX_FILE_BYTES.max)
    throw new Error(
      `the input is ${bytes} bytes, more than BATCH_MAX_FILE_BYTES may be (${BATCH_MAX_FILE_BYTES.max}; libs/config/src/env/batches.vars.ts)`,
    );
  const maxLines = Math.max(LINES, BATCH_MAX_LINES.default);
  const maxFileBytes = Math.min(BATCH_MAX_FILE_BYTES.max, Math.max(BATCH_MAX_FILE_BYTES.default, bytes + 1024 * 1024));
  const groupsExpected = Math.min(PROMPTS, LINES);
  const inputLine =
    `input: ${int(LINES)} lines, ${mib(bytes)} MiB, written in ${sec(generateMs)} s; ${groupsExpected} system prompts; ` +
    `${int(repeats)} lines (${((100 * repeats) / LINES).toFixed(1)}%) repeat an earlier line's greedy request`;
  const limitsLine =
    `limits: BATCH_MAX_LINES=${maxLines} (default ${BATCH_MAX_LINES.default}, at most ${BATCH_MAX_LINES.max}), ` +
    `BATCH_MAX_FILE_BYTES=${maxFileBytes} (default ${BATCH_MAX_FILE_BYTES.default}, at most ${BATCH_MAX_FILE_BYTES.max})`;
  header.push(inputLine, limitsLine);
  console.log(`${inputLine}\n${limitsLine}`);

  const configFile = join(work, 'conveyor.yaml');
  writeFileSync(
    configFile,
    stringify({
      deployments: [
        {
          id: DEPLOYMENT,
          engine: 'simulated',
          simulated: { ttftMs: TTFT_MS, tpotMs: TPOT_MS, outputTokens: TOKENS },
          parallel: SEQUENCES,
          contextSize: 4096,
        },
      ],
    }),
  );
  const redisUrl = await children.launchRedis(options['redis-port'] || undefined);
  const redisChild = children.list.find((c) => c.name === 'redis');
  redis = await RedisNodes.connect([redisUrl]);
  const port = await freePort();
  /** @type {Record<string, string>} */
  const env = {
    REDIS_URL: redisUrl,
    REDIS_CLUSTER_NODES: '',
    REDIS_PREFIX: `bench-batch-scale-${randomBytes(4).toString('hex')}`,
    CONVEYOR_CONFIG: configFile,
    DATA_DIR: join(work, 'data'),
    HOST: '127.0.0.1',
    UV_THREADPOOL_SIZE: '1',
    BATCH_MAX_LINES: String(maxLines),
    BATCH_MAX_FILE_BYTES: String(maxFileBytes),
    // The runner's own settings, when a run asks for other than the defaults.
    ...(options.inflight ? { BATCH_INFLIGHT: String(positiveInt('--inflight', options.inflight)) } : {}),
    ...(options['tick-ms'] ? { BATCH_TICK_MS: String(positiveInt('--tick-ms', options['tick-ms'])) } : {}),
  };
  const api = await children.launch(
    'api',
    process.execPath,
    [join(dist, 'apps/api/src/main.js')],
    { ...env, PORT: String(port) },
    /listening on/,
    120_000,
  );
  const base = `http://127.0.0.1:${port}`;
  const workers = await children.launchWorkers(WORKERS, { dist, env });
  await children.watch(waitForLiveWorkers(base, DEPLOYMENT, WORKERS));
  const parts = { api, workers, redisPid: redisChild?.proc.pid };
  console.log(`Redis: a redis-server of the bench's own at ${redisUrl}; API at ${base}; ${WORKERS} workers live`);

  const baseline = { redisMemory: await redis.usedMemory(), keys: await redis.keyCount() };
  probe = new HealthProbe(`${base}/health`);
  const t0 = Date.now();
  sampler = new Sampler(redis, api.proc.pid, t0);
  /** Phase boundaries, `Date.now()`. */
  const at = { start: t0, accepted: 0, created: 0, validated: 0, finalizing: 0, completed: 0, read: 0 };

  // Accept: the upload, streamed from disk.
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', await openAsBlob(input, { type: 'application/jsonl' }), 'batch-scale.jsonl');
  const upload = await children.watch(fetch(`${base}/v1/files`, { method: 'POST', body: form }));
  if (upload.status !== 200) throw new Error(`upload: ${upload.status} ${await upload.text()}`);
  const file = /** @type {{ id: string }} */ (await upload.json());
  at.accepted = Date.now();
  console.error(`accepted in ${sec(at.accepted - at.start)} s`);

  // Validate, then run: the batch polled every 250 ms until it ends.
  sampler.status = 'validating';
  const created = await fetch(`${base}/v1/batches`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
  });
  if (created.status !== 200) throw new Error(`create: ${created.status} ${await created.text()}`);
  const { id } = /** @type {{ id: string }} */ (await created.json());
  at.created = Date.now();
  /** @type {Batch} */
  let batch;
  let cpuAtValidated = cpuReading(parts);
  let cpuAtFinalizing = cpuAtValidated;
  // Redis commands while the batch runs: per line, a count that holds where times do not.
  let redisAtValidated = await redis.read();
  let redisAtFinalizing = redisAtValidated;
  let lastDone = -1;
  let lastProgress = Date.now();
  let lastPrinted = 0;
  let doneAtFinalizing = LINES;
  let cancelSent = false;
  for (;;) {
    batch = /** @type {Batch} */ (await children.watch(fetch(`${base}/v1/batches/${id}`).then((r) => r.json())));
    const now = Date.now();
    const done = batch.request_counts.completed + batch.request_counts.failed;
    sampler.status = batch.status;
    sampler.done = done;
    if (!at.validated && batch.status !== 'validating') {
      at.validated = now;
      cpuAtValidated = cpuReading(parts);
      redisAtValidated = await redis.read();
      console.error(`validated in ${sec(at.validated - at.created)} s: ${batch.status}`);
    }
    if (!at.finalizing && at.validated && batch.status !== 'in_progress') {
      at.finalizing = now;
      cpuAtFinalizing = cpuReading(parts);
      redisAtFinalizing = await redis.read();
      if (CANCEL_AFTER_MS) doneAtFinalizing = done;
    }
    if (CANCEL_AFTER_MS && !cancelSent && at.validated && now - at.validated > CANCEL_AFTER_MS) {
      cancelSent = true;
      const cancel = await fetch(`${base}/v1/batches/${id}/cancel`, { method: 'POST' });
      if (cancel.status !== 200) throw new Error(`cancel: ${cancel.status} ${await cancel.text()}`);
      console.error(`cancelled after ${sec(now - at.validated)} s running, ${int(done)} lines done`);
    }
    if (TERMINAL.includes(batch.status)) break;
    if (done !== lastDone) [lastDone, lastProgress] = [done, now];
    // Cancelled lines are counted at the end, so a drain shows no progress until it is through.
    else if (at.validated && batch.status !== 'cancelling' && now - lastProgress > STALL_MS)
      throw new Error(`batch ${id} ${batch.status}, no line further in ${STALL_MS / 1000} s (${done} of ${LINES})`);
    if (now - lastPrinted > 30_000 && at.validated) {
      lastPrinted = now;
      console.error(`  ${sec(now - at.start)} s: ${batch.status}, ${int(done)} of ${int(LINES)} lines`);
    }
    await sleep(250);
  }
  at.completed = Date.now();
  if (batch.status !== (CANCEL_AFTER_MS ? 'cancelled' : 'completed'))
    throw new Error(`batch ${id} ended ${batch.status}: ${JSON.stringify(batch.errors?.data ?? null)}`);
  console.error(`completed in ${sec(at.completed - at.start)} s`);

  // Every custom_id exactly once, over the output and error files.
  const tally = new Tally(LINES);
  const output = batch.output_file_id
    ? await children.watch(readResults(base, batch.output_file_id, tally))
    : { lines: 0, bytes: 0, succeeded: 0 };
  const errorsFile = batch.error_file_id
    ? await children.watch(readResults(base, batch.error_file_id, tally))
    : { lines: 0, bytes: 0, succeeded: 0 };
  at.read = Date.now();
  const missing = LINES - tally.seen;
  const allOnce = missing === 0 && tally.duplicates === 0 && tally.unknown === 0;

  await sampler.stop();
  const probes = await probe.stop();
  probe = null;
  const apiMemory = processMemory(api.proc.pid);
  const endState = { redisMemory: await redis.usedMemory(), keys: await redis.keyCount() };
  // What the keys left after the run are, the most common shapes first.
  const keyShapes = (await redis.keyShapes(env.REDIS_PREFIX)).slice(0, 6);

  // ---- figures ----
  const runningMs = Math.max(1, at.finalizing - at.validated);
  const linesPerSecond = (doneAtFinalizing * 1000) / runningMs;
  const serverRunningS =
    batch.in_progress_at && batch.finalizing_at ? batch.finalizing_at - batch.in_progress_at : null;
  const running = coresBusy(cpuAtValidated, cpuAtFinalizing, runningMs);
  const redisRunning = redisDelta(redisAtValidated, redisAtFinalizing);
  const perLine = (/** @type {number} */ n) => n / Math.max(1, doneAtFinalizing);
  const redisPerLine = {
    commands: perLine(redisRunning.commands),
    top: [...redisRunning.calls]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([name, n]) => [name, perLine(n)]),
  };
  const phases = /** @type {const} */ ([
    ['upload', at.start, at.accepted],
    ['validating', at.accepted, at.validated],
    ['in_progress', at.validated, at.finalizing],
    ['finalizing', at.finalizing, at.completed],
    ['reading the output', at.completed, at.read],
  ]);
  /** @param {Probe[]} list */
  const worst = (list) => list.reduce((w, p) => (p.ms > w.ms ? p : w), { at: 0, ms: 0, ok: true });
  const latencies = probes.map((p) => p.ms);
  const phaseOf = (/** @type {number} */ t) => phases.find(([, from, to]) => t >= from && t < to)?.[0] ?? 'after';
  const health = {
    probes: probes.length,
    failed: probes.filter((p) => !p.ok).length,
    p50Ms: pct(latencies, 50),
    p99Ms: pct(latencies, 99),
    worstMs: worst(probes).ms,
    worstPhase: phaseOf(worst(probes).at),
    over100Ms: probes.filter((p) => p.ms > 100).length,
    over1s: probes.filter((p) => p.ms > 1000).length,
    worstByPhase: Object.fromEntries(
      phases.map(([name, from, to]) => {
        const within = probes.filter((p) => p.at >= from && p.at < to);
        return [name, within.length ? worst(within).ms : null];
      }),
    ),
  };
  const figures = {
    lines: LINES,
    inputBytes: bytes,
    repeats,
    acceptMs: at.accepted - at.start,
    acceptMiBPerSecond: bytes / 2 ** 20 / ((at.accepted - at.start) / 1000),
    validateMs: at.validated - at.accepted,
    runningMs,
    linesPerSecond,
    serverRunningS,
    finalizingMs: at.completed - at.finalizing,
    wallMs: at.completed - at.start,
    readOutputMs: at.read - at.completed,
    requestCounts: batch.request_counts,
    output: { ...output, file: 'output' },
    errorFile: { ...errorsFile, file: 'error' },
    customIds: { seen: tally.seen, missing, duplicates: tally.duplicates, unknown: tally.unknown, allOnce },
    firstMissing: tally.missing(),
    apiRssPeakSampled: sampler.peak.apiRss,
    apiVmHwm: apiMemory?.peak ?? null,
    redisMemoryBaseline: baseline.redisMemory,
    redisMemoryPeak: sampler.peak.redisMemory,
    redisMemoryEnd: endState.redisMemory,
    redisKeysBaseline: baseline.keys,
    redisKeysPeak: sampler.peak.keys,
    redisKeysEnd: endState.keys,
    redisKeyShapesEnd: Object.fromEntries(keyShapes),
    health,
    coresBusyWhileRunning: running,
    redisCommandsPerLineWhileRunning: redisPerLine,
    plan: batch.plan ?? null,
    planExpected: { groups: groupsExpected, repeats_folded: repeats },
  };

  const plan =
    /** @type {{ groups?: number, repeats_folded?: number, prompt_tokens?: { total: number, cached: number, folded: number } } | undefined} */ (
      batch.plan
    );
  const planText = plan
    ? `plan: ${plan.groups} groups (expected ${groupsExpected}), ${plan.repeats_folded} repeats folded (expected ${repeats}); ` +
      `prompt tokens ${JSON.stringify(plan.prompt_tokens)}`
    : 'plan: none (the batch object has no plan field)';
  const rows = [
    [
      'accept: upload done (POST /v1/files, streamed)',
      `${sec(figures.acceptMs)} s (${figures.acceptMiBPerSecond.toFixed(1)} MiB/s)`,
    ],
    ['validate: created until status leaves validating', `${sec(figures.validateMs)} s`],
    ['running: in_progress until finalizing (or cancelling)', `${sec(runningMs)} s`],
    [
      'lines per second while running',
      `${linesPerSecond.toFixed(0)}${serverRunningS !== null ? ` (batch timestamps: ${serverRunningS} s)` : ''}`,
    ],
    ['finalizing until completed', `${sec(figures.finalizingMs)} s`],
    ['total wall: upload start until completed', `${sec(figures.wallMs)} s`],
    [
      'request counts',
      `${int(batch.request_counts.completed)} completed, ${int(batch.request_counts.failed)} failed of ${int(batch.request_counts.total)}`,
    ],
    [
      'output file / error file',
      `${int(output.lines)} lines, ${mib(output.bytes)} MiB / ${int(errorsFile.lines)} lines; read in ${sec(figures.readOutputMs)} s`,
    ],
    [
      'every custom_id exactly once',
      allOnce
        ? 'yes'
        : `NO: ${missing} missing (first ${figures.firstMissing.join(', ')}), ${tally.duplicates} twice, ${tally.unknown} unknown`,
    ],
    [
      'API peak RSS (VmRSS sampled each second / VmHWM)',
      `${mib(figures.apiRssPeakSampled)} / ${apiMemory ? mib(apiMemory.peak) : '?'} MiB`,
    ],
    [
      'Redis used_memory: before / peak / after',
      `${mib(baseline.redisMemory)} / ${mib(figures.redisMemoryPeak)} / ${mib(endState.redisMemory)} MiB`,
    ],
    [
      'Redis keys (DBSIZE): before / peak / after',
      `${int(baseline.keys)} / ${int(figures.redisKeysPeak)} / ${int(endState.keys)}`,
    ],
    ['/health every 250 ms: probes, failed', `${health.probes}, ${health.failed}`],
    [
      '/health p50 / p99 / worst',
      `${health.p50Ms.toFixed(1)} / ${health.p99Ms.toFixed(1)} / ${health.worstMs.toFixed(1)} ms (worst while ${health.worstPhase})`,
    ],
    [
      '/health worst by phase',
      Object.entries(health.worstByPhase)
        .map(([k, v]) => `${k} ${v === null ? '-' : v.toFixed(0)}`)
        .join(', ') + ' ms',
    ],
    ['/health over 100 ms / over 1 s', `${health.over100Ms} / ${health.over1s}`],
    [
      'cores busy while running: API, workers, Redis, bench, others',
      `${share(running.api)}, ${share(running.workers)}, ${share(running.redis)}, ${share(running.bench)}, ${share(running.others)} (machine ${share(running.machine / os.cpus().length)} of ${os.cpus().length} cores)`,
    ],
    [
      'Redis commands per line while running (most called)',
      `${redisPerLine.commands.toFixed(1)} (${redisPerLine.top.map(([name, n]) => `${name} ${Number(n).toFixed(1)}`).join(', ')})`,
    ],
  ];
  const text = table(['measure', 'value'], rows);
  const shapesText = `Redis keys after the run, by shape: ${keyShapes.map(([shape, n]) => `\`${shape}\` ${int(n)}`).join(', ')}`;
  header.push(`load average at the end: ${loadAverage()}`);
  console.log(`\n${text}\n\n${planText}\n${shapesText}\nload average at the end: ${loadAverage()}`);
  const problems = children.problems();
  if (problems.length) console.log(`\nWarnings the processes logged (first 10):\n${problems.slice(0, 10).join('\n')}`);

  // The timeline thinned to about 300 readings, so that an hour's run keeps a result file of a readable size.
  const { samples } = sampler;
  const every = Math.ceil(samples.length / 300);
  const timeline = samples.filter((_, i) => i % every === 0 || i === samples.length - 1);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const md = `# A batch of ${int(LINES)} lines on simulated workers\n\n${header.map((l) => `- ${l}`).join('\n')}\n\n${text}\n\n${planText}\n\n${shapesText}\n`;
  writeFileSync(resolve(RESULTS_DIR, `${options.out}.md`), md);
  writeFileSync(
    resolve(RESULTS_DIR, `${options.out}.json`),
    JSON.stringify({ header, figures, timeline }, null, 2) + '\n',
  );
  console.log(
    `\nwrote ${['md', 'json'].map((e) => relative(process.cwd(), resolve(RESULTS_DIR, `${options.out}.${e}`))).join(', ')}`,
  );
  if (!allOnce) process.exitCode = 1;
} catch (err) {
  console.error(`\nbench failed: ${(err instanceof Error ? err.stack : undefined) ?? err}`);
  process.exitCode = 1;
} finally {
  await sampler?.stop().catch(() => undefined);
  await probe?.stop().catch(() => undefined);
  redis?.disconnect();
  await children.stopAll();
  rmSync(work, { recursive: true, force: true });
}
