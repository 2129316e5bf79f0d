#!/usr/bin/env node
// Conveyor: what does the queue path cost?
//
// Runs the same model two ways, one after the other (never at the same time, so
// they do not compete for the CPU):
//   1. in-process: LlamaCppEngine.generate() called directly in this process;
//   2. platform:   the real API + worker processes (HTTP -> BullMQ/Redis -> worker
//                  -> Redis stream -> API -> HTTP), spawned from dist/.
// and prints
//   - the added latency of a 1-token reply (p50/p99, platform minus in-process);
//   - aggregate tokens/s for 1, 4 and 8 concurrent 128-token replies, plus TTFT.
//
// Usage: node bench/platform-vs-inprocess.mjs [--model tiny|bench|/path.gguf] [--threads N] [--quick]
//        (needs `npm run build` and a Redis at REDIS_URL; see bench/README.md)
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { HttpClient } from './lib/http.mjs';
import { Children, freePort, stopChildrenOnSignal } from './lib/processes.mjs';
import { deleteKeys } from './lib/redis.mjs';
import { fmtMs, fmtSigned, now, pct, sleep, table } from './lib/stats.mjs';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { rerunWithWorkerThreadpool, WORKER_THREADPOOL_SIZE } from './lib/threadpool.mjs';

/** @import { DistModules } from './lib/dist.mjs' */
/** @import { StreamResult } from './lib/http.mjs' */
/**
 * CPU ms a process used: all its threads, and its main (JavaScript) thread alone.
 * @typedef {{ total: number, main: number }} CpuMs
 */
/** @typedef {Record<string, CpuMs | null>} CpuByName CPU ms by process name; null where unreadable */
/**
 * @typedef {object} CpuSnapshot
 * @property {CpuByName} at
 * @property {(old: CpuSnapshot) => CpuByName} since
 */
/**
 * One reply, in process or through the platform.
 * @typedef {Pick<StreamResult, 'ttft' | 'tokens' | 'promptTokens'> & { finishReason: string | null }} Reply
 */
/** @typedef {(content: string, maxTokens: number) => Promise<Reply>} InProcessGen */
/**
 * @typedef {object} Throughput
 * @property {number} tps
 * @property {number} ttftP50
 * @property {number} tokens
 * @property {number} wall
 * @property {CpuByName} cpu
 */
/** @typedef {{ usage?: { prompt_tokens: number, completion_tokens: number } }} ChatReply */
/**
 * Machine-wide busy CPU, this bench's own and its children's, and Redis's (null if unknown), at `t`.
 * @typedef {{ busy: number, own: number, redis: number | null, t: number }} LoadMark
 */
/** @typedef {{ cpu: number, wall: number, share: number, redis: number | null }} OtherLoad */
/**
 * A row of the CPU table: its label, the in-process and the platform CPU, and what each is divided by.
 * @typedef {[string, CpuByName, CpuByName, number, number]} CpuRow
 */

rerunWithWorkerThreadpool();

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = resolve(ROOT, 'dist');
const API_MAIN = resolve(DIST, 'apps/api/src/main.js');
const WORKER_MAIN = resolve(DIST, 'apps/worker/src/main.js');
const MODELS_DIR = resolve(ROOT, 'models');
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

// ---------------------------------------------------------------- options

const USAGE =
  'Usage: node bench/platform-vs-inprocess.mjs [--model tiny|bench|/path.gguf] [--threads N] [--context-size N] [--quick]';
const opts = parseCli(USAGE, {
  model: { type: 'string', default: 'bench' },
  threads: { type: 'string', default: '1' },
  'context-size': { type: 'string', default: '1024' },
  quick: { type: 'boolean', default: false },
});
const THREADS = positiveInt('--threads', opts.threads);
const CONTEXT_SIZE = positiveInt('--context-size', opts['context-size']);
const QUICK = opts.quick;

const PARALLEL = 8; // sequences in the in-process engine = PARALLEL of the platform worker
const CONCURRENCIES = [1, 4, 8];
const STREAM_TOKENS = 128;
const PLAN = QUICK
  ? { latencyWarmup: 3, latencyRuns: 20, tputWarmupRounds: 1, tputRounds: 1 }
  : { latencyWarmup: 5, latencyRuns: 100, tputWarmupRounds: 1, tputRounds: 3 };
const LATENCY_PROMPT = 'Say hello.';
const STREAM_PROMPT = 'Write a long story about a lighthouse keeper and a storm.';

// ---------------------------------------------------------------- helpers

/**
 * @template {keyof DistModules} P
 * @param {P} path
 * @returns {Promise<DistModules[P]>}
 */
const importDist = (path) => import(pathToFileURL(resolve(DIST, path)).href);

// ---------------------------------------------------------------- CPU accounting (Linux /proc; null elsewhere)

const CLK_TCK = 100;

/**
 * @param {string} path
 * @returns {number}
 */
function statTicks(path) {
  // Fields after "(comm)": state is field 3, utime 14, stime 15 (1-based, counting pid as 1).
  const text = readFileSync(path, 'utf8');
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

/**
 * CPU ms used so far by a process: all threads, and its main (JavaScript) thread alone.
 * @param {number | undefined} pid
 * @returns {CpuMs | null}
 */
function cpuOf(pid) {
  try {
    const total = (statTicks(`/proc/${pid}/stat`) * 1000) / CLK_TCK;
    const main = (statTicks(`/proc/${pid}/task/${pid}/stat`) * 1000) / CLK_TCK;
    return { total, main };
  } catch {
    return null;
  }
}

/**
 * Snapshot of named pids; `since(old)` gives the ms each used in between.
 * @param {Record<string, number | undefined>} pids
 * @returns {CpuSnapshot}
 */
function cpuSnapshot(pids) {
  const at = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuOf(pid)]));
  return {
    at,
    since(old) {
      /** @type {CpuByName} */
      const out = {};
      for (const name of Object.keys(pids)) {
        const a = old.at[name];
        const b = at[name];
        // Both counters tick at 10 ms; keep the thread's share from exceeding its process's.
        out[name] = a && b ? { total: b.total - a.total, main: Math.min(b.main - a.main, b.total - a.total) } : null;
      }
      return out;
    },
  };
}

/**
 * @param {CpuMs | null | undefined} c
 * @param {number} per
 */
const fmtCpu = (c, per) => (c ? `${(c.total / per).toFixed(2)} (JS main thread ${(c.main / per).toFixed(2)})` : 'n/a');

// ---------------------------------------------------------------- Redis

/** @type {string | null} */
let currentPrefix = null;

/**
 * @param {number} n
 * @returns {Promise<number[]>}
 */
async function redisPingMs(n) {
  const { Redis } = await import('ioredis');
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    for (let i = 0; i < 10; i++) await redis.ping();
    const times = [];
    for (let i = 0; i < n; i++) {
      const t0 = now();
      await redis.ping();
      times.push(now() - t0);
    }
    return times;
  } finally {
    redis.disconnect();
  }
}

// ---------------------------------------------------------------- HTTP client (keep-alive, no fetch overhead)

const children = new Children(ROOT);
const client = new HttpClient();

/**
 * @param {string} baseUrl
 * @param {string} model
 * @param {number} maxTokens
 */
function streamChat(baseUrl, model, maxTokens) {
  const body = { model, messages: [{ role: 'user', content: STREAM_PROMPT }], max_tokens: maxTokens, temperature: 0 };
  return client.streamChat(`${baseUrl}/v1/chat/completions`, body);
}

/**
 * @param {string} baseUrl
 * @param {string} model
 * @param {number} maxTokens
 * @returns {Promise<ChatReply>}
 */
function chatOnce(baseUrl, model, maxTokens) {
  return client
    .call(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      body: {
        model,
        messages: [{ role: 'user', content: LATENCY_PROMPT }],
        max_tokens: maxTokens,
        temperature: 0,
        stream: false,
      },
    })
    .then((text) => /** @type {ChatReply} */ (JSON.parse(text)));
}

// ---------------------------------------------------------------- measurements

/**
 * @param {string} label
 * @param {number} k concurrent replies per round
 * @param {number} rounds
 * @param {() => Promise<Reply>} runOne
 * @param {Record<string, number | undefined>} pids
 * @param {(k: number) => Promise<unknown>} [beforeRound]
 * @returns {Promise<Throughput>}
 */
async function throughputRounds(label, k, rounds, runOne, pids, beforeRound = async () => {}) {
  const cpu0 = cpuSnapshot(pids);
  /** @type {{ wall: number, tokens: number }[]} */
  const perRound = [];
  /** @type {number[]} */
  const ttfts = [];
  /** @type {Record<string, number>} */
  const finish = {};
  for (let r = 0; r < rounds; r++) {
    await beforeRound(k);
    const t0 = now();
    const results = await Promise.all(Array.from({ length: k }, () => runOne()));
    const wall = now() - t0;
    const tokens = results.reduce((s, x) => s + x.tokens, 0);
    for (const x of results) {
      ttfts.push(x.ttft);
      const reason = String(x.finishReason);
      finish[reason] = (finish[reason] ?? 0) + 1;
    }
    perRound.push({ wall, tokens });
  }
  const cpu = cpuSnapshot(pids).since(cpu0);
  const tokens = perRound.reduce((s, x) => s + x.tokens, 0);
  const wall = perRound.reduce((s, x) => s + x.wall, 0);
  const tps = (tokens / wall) * 1000;
  const spread = perRound.map((x) => ((x.tokens / x.wall) * 1000).toFixed(0)).join(', ');
  const finishText = Object.entries(finish)
    .map(([k2, v]) => `${k2}:${v}`)
    .join(' ');
  console.log(
    `  ${label} k=${k}: ${tokens} tokens in ${(wall / 1000).toFixed(2)} s over ${rounds} round(s) = ${tps.toFixed(1)} tok/s ` +
      `(rounds: ${spread}; TTFT p50 ${fmtMs(pct(ttfts, 50))}; finish ${finishText})`,
  );
  return { tps, ttftP50: pct(ttfts, 50), tokens, wall, cpu };
}

/** @param {string} modelPath */
async function measureInProcess(modelPath) {
  const { LlamaCppEngine } = await importDist('libs/engine/src/index.js');
  console.log(
    `\n== In-process: LlamaCppEngine (parallel ${PARALLEL}, threads ${THREADS}, context ${CONTEXT_SIZE}, UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE})`,
  );
  const tLoad = now();
  const engine = await LlamaCppEngine.load({
    modelPath,
    contextSize: CONTEXT_SIZE,
    parallel: PARALLEL,
    threads: THREADS,
    gpu: false,
  });
  console.log(`  loaded in ${fmtMs(now() - tLoad)}`);
  try {
    /** @type {InProcessGen} */
    const gen = async (content, maxTokens) => {
      const t0 = now();
      // Set by onOutput: typed by a cast, so the checker does not narrow it to its initial value.
      let ttft = /** @type {number | null} */ (null);
      const result = await engine.generate(
        { messages: [{ role: 'user', content }], sampling: { temperature: 0 }, maxTokens, stop: [] },
        { onStart() {}, onOutput: (p) => void (ttft === null && p.text && (ttft = now() - t0)) },
      );
      return {
        ttft: ttft ?? now() - t0,
        tokens: result.usage.completionTokens,
        finishReason: result.finishReason,
        promptTokens: result.usage.promptTokens,
      };
    };

    // node-llama-cpp hands a disposed sequence back asynchronously (under the context lock), so
    // right after a round ends fewer than `parallel` may be free; engines built before the
    // engine waited for one themselves threw "No sequences left". Wait outside the timed region.
    /** @param {number} k */
    const waitForSequences = async (k) => {
      // The engine's own context (private to it): read only where it has the count.
      const { context } = /** @type {{ context?: { sequencesLeft?: unknown } }} */ (/** @type {unknown} */ (engine));
      if (typeof context?.sequencesLeft !== 'number') return sleep(20);
      const t0 = now();
      while (context.sequencesLeft < k && now() - t0 < 5000) await sleep(1);
    };

    // 1. latency of a 1-token reply
    let promptTokens = 0;
    for (let i = 0; i < PLAN.latencyWarmup; i++) promptTokens = (await gen(LATENCY_PROMPT, 1)).promptTokens;
    const pids = { inproc: process.pid };
    const cpu0 = cpuSnapshot(pids);
    /** @type {number[]} */
    const latency = [];
    for (let i = 0; i < PLAN.latencyRuns; i++) {
      const t0 = now();
      await gen(LATENCY_PROMPT, 1);
      latency.push(now() - t0);
    }
    const latencyCpu = cpuSnapshot(pids).since(cpu0);
    console.log(
      `  1-token reply (${promptTokens} prompt tokens), ${latency.length} sequential calls: p50 ${fmtMs(pct(latency, 50))}, p99 ${fmtMs(pct(latency, 99))}`,
    );

    // 2. throughput
    for (let i = 0; i < PLAN.tputWarmupRounds; i++) {
      await waitForSequences(PARALLEL);
      await Promise.all(Array.from({ length: PARALLEL }, () => gen(STREAM_PROMPT, STREAM_TOKENS)));
    }
    /** @type {Record<number, Throughput>} */
    const tput = {};
    for (const k of CONCURRENCIES) {
      tput[k] = await throughputRounds(
        'in-process',
        k,
        PLAN.tputRounds,
        () => gen(STREAM_PROMPT, STREAM_TOKENS),
        pids,
        waitForSequences,
      );
    }
    // The engine stays loaded (idle) for the paired latency measurement beside the platform.
    return { latency, latencyCpu, tput, gen, dispose: () => engine.dispose() };
  } catch (err) {
    await engine.dispose();
    throw err;
  }
}

/**
 * @param {string} model
 * @param {string} deploymentId
 * @param {InProcessGen} inprocGen
 */
async function measurePlatform(model, deploymentId, inprocGen) {
  const port = await freePort();
  const prefix = `bench-${randomBytes(6).toString('hex')}`;
  const env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    REDIS_URL,
    REDIS_PREFIX: prefix,
    MODEL: model,
    MODELS_DIR,
    PARALLEL: String(PARALLEL),
    THREADS: String(THREADS),
    CONTEXT_SIZE: String(CONTEXT_SIZE),
    UV_THREADPOOL_SIZE: WORKER_THREADPOOL_SIZE,
  };
  console.log(
    `\n== Platform: API + 1 worker (PARALLEL=${PARALLEL}, THREADS=${THREADS}, CONTEXT_SIZE=${CONTEXT_SIZE}), REDIS_PREFIX=${prefix}`,
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  currentPrefix = prefix;
  try {
    return await children.watch(runPlatform(env, baseUrl, deploymentId, inprocGen));
  } finally {
    client.destroy();
    for (const c of children.list) childrenCpuMs += cpuOf(c.proc.pid)?.total ?? 0;
    await children.stopAll();
    const deleted = await deleteKeys(REDIS_URL, prefix).catch(
      /** @param {unknown} err */
      (err) => (
        console.error(`  could not delete ${prefix}:* keys: ${err instanceof Error ? err.message : String(err)}`),
        0
      ),
    );
    currentPrefix = null;
    console.log(`  stopped api and worker; deleted ${deleted} Redis key(s) under ${prefix}:*`);
  }
}

/**
 * @param {Record<string, string>} env
 * @param {string} baseUrl
 * @param {string} deploymentId
 * @param {InProcessGen} inprocGen
 */
async function runPlatform(env, baseUrl, deploymentId, inprocGen) {
  const [api, worker] = await Promise.all([
    children.launch('api', process.execPath, [API_MAIN], env, /listening on/),
    children.launch('worker', process.execPath, [WORKER_MAIN], env, /Worker ready/),
  ]);
  console.log(
    `  api ready in ${fmtMs(api.readyMs)}, worker ready in ${fmtMs(worker.readyMs)} (pids ${api.proc.pid}, ${worker.proc.pid})`,
  );

  // Context for the latency numbers: what HTTP alone and one Redis round trip cost here.
  for (let i = 0; i < 20; i++) await client.call(`${baseUrl}/health`);
  /** @type {number[]} */
  const health = [];
  for (let i = 0; i < PLAN.latencyRuns; i++) {
    const t0 = now();
    await client.call(`${baseUrl}/health`);
    health.push(now() - t0);
  }
  const ping = await redisPingMs(PLAN.latencyRuns);

  // 1. latency of a 1-token reply
  let promptTokens = 0;
  for (let i = 0; i < PLAN.latencyWarmup; i++) {
    const reply = await chatOnce(baseUrl, deploymentId, 1);
    promptTokens = reply.usage?.prompt_tokens ?? 0;
  }
  const pids = { api: api.proc.pid, worker: worker.proc.pid, client: process.pid };
  const cpu0 = cpuSnapshot(pids);
  /** @type {number[]} */
  const latency = [];
  for (let i = 0; i < PLAN.latencyRuns; i++) {
    const t0 = now();
    const reply = await chatOnce(baseUrl, deploymentId, 1);
    latency.push(now() - t0);
    if (reply.usage?.completion_tokens !== 1)
      throw new Error(`expected 1 completion token, got ${JSON.stringify(reply.usage)}`);
  }
  const latencyCpu = cpuSnapshot(pids).since(cpu0);
  console.log(
    `  1-token reply (${promptTokens} prompt tokens), ${latency.length} sequential requests: p50 ${fmtMs(pct(latency, 50))}, p99 ${fmtMs(pct(latency, 99))}`,
  );
  console.log(
    `  for reference: GET /health p50 ${fmtMs(pct(health, 50))}, p99 ${fmtMs(pct(health, 99))}; Redis PING p50 ${fmtMs(pct(ping, 50))}, p99 ${fmtMs(pct(ping, 99))}`,
  );

  // 1b. the same, paired: each platform request right after an in-process call, so both see the
  // machine at the same moment. The per-pair difference is the queue path's own cost, free of the
  // drift between two phases measured a minute apart.
  /** @type {{ inproc: number[], platform: number[], added: number[] }} */
  const paired = { inproc: [], platform: [], added: [] };
  for (let i = 0; i < PLAN.latencyRuns; i++) {
    const t0 = now();
    await inprocGen(LATENCY_PROMPT, 1);
    const t1 = now();
    await chatOnce(baseUrl, deploymentId, 1);
    const t2 = now();
    paired.inproc.push(t1 - t0);
    paired.platform.push(t2 - t1);
    paired.added.push(t2 - t1 - (t1 - t0));
  }
  console.log(
    `  paired with in-process calls: added p50 ${fmtSigned(pct(paired.added, 50))}, p99 ${fmtSigned(pct(paired.added, 99))} ` +
      `(in-process p50 ${fmtMs(pct(paired.inproc, 50))}, platform p50 ${fmtMs(pct(paired.platform, 50))})`,
  );

  // 2. throughput
  for (let i = 0; i < PLAN.tputWarmupRounds; i++)
    await Promise.all(Array.from({ length: PARALLEL }, () => streamChat(baseUrl, deploymentId, STREAM_TOKENS)));
  /** @type {Record<number, Throughput>} */
  const tput = {};
  for (const k of CONCURRENCIES)
    tput[k] = await throughputRounds(
      'platform',
      k,
      PLAN.tputRounds,
      () => streamChat(baseUrl, deploymentId, STREAM_TOKENS),
      pids,
    );
  // Anything the platform logged as a warning or error (a failed and retried job, say) is worth seeing.
  const problems = children.problems();
  if (problems.length)
    console.log(`  !! ${problems.length} warning/error line(s), e.g.:\n     ${problems.slice(0, 5).join('\n     ')}`);
  return { latency, latencyCpu, tput, health, ping, paired };
}

// ---------------------------------------------------------------- main

/**
 * Busy CPU ms of the whole machine so far (Linux), or null.
 * @returns {number | null}
 */
function machineBusyMs() {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal ...
    return ((f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) * 1000) / CLK_TCK;
  } catch {
    return null;
  }
}
let childrenCpuMs = 0;

/**
 * CPU ms the Redis server has used (INFO cpu), or null.
 * @returns {Promise<number | null>}
 */
async function redisCpuMs() {
  const { Redis } = await import('ioredis');
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const info = await redis.info('cpu');
    /** @param {string} name */
    const get = (name) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1]);
    const total = (get('used_cpu_sys') + get('used_cpu_user')) * 1000;
    return Number.isFinite(total) ? total : null;
  } catch {
    return null;
  } finally {
    redis.disconnect();
  }
}

/**
 * Machine-wide busy CPU, this bench's and its (finished) children's CPU, and Redis's, at one moment.
 * @returns {Promise<LoadMark | null>}
 */
async function loadMark() {
  const redis = await redisCpuMs();
  const busy = machineBusyMs();
  const own = cpuOf(process.pid);
  return busy === null || !own ? null : { busy, own: own.total + childrenCpuMs, redis, t: now() };
}

/**
 * CPU that processes other than this bench and its children used between two marks.
 * @param {LoadMark | null} from
 * @param {LoadMark | null} to
 * @returns {OtherLoad | null}
 */
function otherLoad(from, to) {
  if (!from || !to) return null;
  const cpu = to.busy - from.busy - (to.own - from.own);
  const wall = to.t - from.t;
  const redis = from.redis !== null && to.redis !== null ? to.redis - from.redis : null;
  return { cpu, wall, share: cpu / wall, redis };
}

/** @param {OtherLoad | null} o */
const fmtOther = (o) =>
  o
    ? `${(o.cpu / 1000).toFixed(1)} CPU-s in ${(o.wall / 1000).toFixed(1)} s (${(o.share * 100).toFixed(0)}% of one core` +
      (o.redis !== null ? `; Redis ${((o.redis / o.wall) * 100).toFixed(0)}% of it` : '') +
      ')' +
      (o.share > 0.2 ? '  <-- WARNING: the machine was not idle; these numbers are noisy' : '')
    : 'n/a (needs Linux /proc)';

/**
 * Load average at the start; the per-phase "other processes" lines say what actually ran alongside.
 * @param {string} when
 */
function reportLoad(when) {
  const [one, five] = os.loadavg();
  console.log(
    `load average ${when}: ${one.toFixed(2)} (1 min), ${five.toFixed(2)} (5 min) on ${os.cpus().length} core(s)`,
  );
}

async function main() {
  const command = [
    'node',
    relative(process.cwd(), fileURLToPath(import.meta.url)) || 'bench/platform-vs-inprocess.mjs',
    ...process.argv.slice(2),
  ].join(' ');
  const cpus = os.cpus();
  console.log('# Conveyor: platform vs in-process');
  console.log(`command: ${command}   (cwd ${process.cwd()})`);
  console.log(
    `machine: ${cpus.length} CPU(s) (${cpus[0]?.model?.trim() ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ` +
      `${os.type()} ${os.release()} ${os.arch()}, node ${process.version}`,
  );
  console.log(`date: ${new Date().toISOString()}   redis: ${REDIS_URL}`);
  reportLoad('at start');

  for (const f of [
    API_MAIN,
    WORKER_MAIN,
    resolve(DIST, 'libs/engine/src/index.js'),
    resolve(DIST, 'libs/gguf/src/index.js'),
  ]) {
    if (!existsSync(f)) throw new Error(`${relative(ROOT, f)} is missing: run \`npm run build\` first`);
  }

  const { ensurePresetModel, isModelPresetName } = await importDist('libs/gguf/src/index.js');
  const { deriveDeploymentId } = await importDist('libs/config/src/index.js');
  let model = opts.model;
  let modelPath;
  if (isModelPresetName(model)) {
    const t0 = now();
    modelPath = await ensurePresetModel(model, MODELS_DIR);
    const ms = now() - t0;
    if (ms > 1000) console.log(`(generated preset "${model}" in ${(ms / 1000).toFixed(1)} s)`);
  } else {
    if (!model.toLowerCase().endsWith('.gguf'))
      throw new Error(`--model must be tiny, bench or a .gguf path (got "${model}")`);
    modelPath = resolve(model);
    if (!existsSync(modelPath)) throw new Error(`Model file not found: ${modelPath}`);
    model = modelPath;
  }
  const deploymentId = deriveDeploymentId(model);
  console.log(
    `model: ${opts.model} -> ${relative(ROOT, modelPath)} (deployment "${deploymentId}"); threads ${THREADS}, ` +
      `parallel ${PARALLEL}, context ${CONTEXT_SIZE}/sequence; ${QUICK ? 'QUICK run' : 'full run'}: ` +
      `latency ${PLAN.latencyRuns} runs after ${PLAN.latencyWarmup} warm-ups, throughput ${PLAN.tputRounds} round(s) per concurrency ` +
      `after ${PLAN.tputWarmupRounds} warm-up round(s), ${STREAM_TOKENS}-token replies`,
  );

  const started = now();
  const mark0 = await loadMark();
  const inproc = await measureInProcess(modelPath);
  const mark1 = await loadMark();
  const otherInproc = otherLoad(mark0, mark1);
  console.log(`  other processes (Redis included) used ${fmtOther(otherInproc)}`);
  await sleep(500); // let the engine's threads wind down before the platform starts
  const mark2 = await loadMark();
  let platform;
  try {
    platform = await measurePlatform(model, deploymentId, inproc.gen);
  } finally {
    await inproc.dispose();
  }
  const otherPlatform = otherLoad(mark2, await loadMark());
  console.log(`  other processes (Redis included) used ${fmtOther(otherPlatform)}`);

  console.log('\n== Results');
  console.log('\n1-token reply latency (in-process engine.generate vs non-stream HTTP through the queue):');
  const lp50 = [pct(inproc.latency, 50), pct(platform.latency, 50)];
  const lp99 = [pct(inproc.latency, 99), pct(platform.latency, 99)];
  const { paired } = platform;
  console.log(
    table(
      ['', 'in-process', 'platform', 'added, one phase after the other', 'added, paired call by call'],
      [
        ['p50', fmtMs(lp50[0]), fmtMs(lp50[1]), fmtSigned(lp50[1] - lp50[0]), fmtSigned(pct(paired.added, 50))],
        ['p99', fmtMs(lp99[0]), fmtMs(lp99[1]), fmtSigned(lp99[1] - lp99[0]), fmtSigned(pct(paired.added, 99))],
      ],
    ),
  );
  console.log('(paired: each platform request follows an in-process call; p50/p99 of the per-pair difference)');

  console.log(
    `\nAggregate throughput, ${STREAM_TOKENS}-token replies (completion tokens / wall time from first request to last reply):`,
  );
  console.log(
    table(
      ['concurrency', 'in-process tok/s', 'platform tok/s', 'ratio', 'in-process TTFT p50', 'platform TTFT p50'],
      CONCURRENCIES.map((k) => [
        String(k),
        inproc.tput[k].tps.toFixed(1),
        platform.tput[k].tps.toFixed(1),
        (platform.tput[k].tps / inproc.tput[k].tps).toFixed(3),
        fmtMs(inproc.tput[k].ttftP50),
        fmtMs(platform.tput[k].ttftP50),
      ]),
    ),
  );
  console.log('(ratio = platform / in-process; TTFT = time from sending the request to the first content text)');

  if (inproc.latencyCpu.inproc && platform.latencyCpu.worker) {
    console.log(
      '\nWhere the CPU goes (CPU ms from /proc; "JS main thread" is the part spent on the event loop, the rest is llama.cpp and V8 helper threads):',
    );
    const n = PLAN.latencyRuns;
    /** @type {CpuRow[]} */
    const rows = [
      ['1-token reply, per request', inproc.latencyCpu, platform.latencyCpu, n, n],
      ...CONCURRENCIES.map(
        /** @returns {CpuRow} */
        (k) => [
          `${STREAM_TOKENS}-token replies k=${k}, per token`,
          inproc.tput[k].cpu,
          platform.tput[k].cpu,
          inproc.tput[k].tokens,
          platform.tput[k].tokens,
        ],
      ),
    ];
    console.log(
      table(
        ['', 'in-process', 'platform worker', 'platform API', 'bench client'],
        rows.map(([label, a, b, na, nb]) => [
          label,
          fmtCpu(a.inproc, na),
          fmtCpu(b.worker, nb),
          fmtCpu(b.api, nb),
          fmtCpu(b.client, nb),
        ]),
      ),
    );
  }
  console.log(
    '\nOther load on the machine while measuring (Redis counts here too, also the share the platform itself causes):',
  );
  console.log(`  in-process phase: ${fmtOther(otherInproc)}`);
  console.log(`  platform phase:   ${fmtOther(otherPlatform)}`);
  console.log(`\ntotal bench time ${((now() - started) / 1000).toFixed(1)} s`);
}

let exitCode = 0;
stopChildrenOnSignal(async () => currentPrefix && deleteKeys(REDIS_URL, currentPrefix));
try {
  await main();
} catch (err) {
  console.error(`\nbench failed: ${(err instanceof Error ? err.stack : undefined) ?? err}`);
  exitCode = 1;
} finally {
  await children.stopAll();
}
// node-llama-cpp keeps native handles alive after dispose: exit explicitly.
process.exit(exitCode);
