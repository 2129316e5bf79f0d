#!/usr/bin/env node
// What the platform around the engine costs, per unit of work, measured without a GPU: many simulated
// workers (engine: simulated) through one and then two API replicas on a Redis of the bench's own.
// Prints Redis CPU, commands and memory, and API CPU, per 1,000 tokens and per request, and from them
// what one Redis core and one API core can carry; then one batch on 1, 4, 16 and 32 workers, and
// where its speed-up stops following the worker count, and what saturated.
//   node bench/capacity.bench.mjs [--short] [--workers 40] [--sequences 16] [--redis-cluster-nodes h:p,...]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { runBatch } from './lib/batch-run.mjs';
import { ChatLoad } from './lib/chat-load.mjs';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { Children, freePort, stopChildrenOnSignal, waitForLiveWorkers } from './lib/processes.mjs';
import { deleteKeys } from './lib/redis.mjs';
import { clusterPrimaries, machineBusyMs, nodeList, processCpuMs, RedisNodes, redisDelta } from './lib/redis-info.mjs';
import { assertBuilt, runHeader } from './lib/report.mjs';
import { sleep, table } from './lib/stats.mjs';

const USAGE = `usage: node bench/capacity.bench.mjs [--short] [--workers N] [--sequences N] [--ttft-ms N] [--tpot-ms N]
  [--tokens N] [--seconds N] [--batch-workers 1,4,16,32] [--batch-lines N] [--batch-tokens N]
  [--redis-port 6382] [--redis-cluster-nodes host:port,...] [--json FILE] [--dist DIR]`;
const options = parseCli(USAGE, {
  short: { type: 'boolean', default: false },
  workers: { type: 'string', default: '' },
  sequences: { type: 'string', default: '' },
  'ttft-ms': { type: 'string', default: '' },
  'tpot-ms': { type: 'string', default: '' },
  tokens: { type: 'string', default: '' },
  seconds: { type: 'string', default: '' },
  'batch-workers': { type: 'string', default: '' },
  'batch-lines': { type: 'string', default: '' },
  'batch-tokens': { type: 'string', default: '' },
  'redis-port': { type: 'string', default: '6382' },
  'redis-cluster-nodes': { type: 'string', default: '' },
  json: { type: 'string', default: '' },
  dist: { type: 'string', default: 'dist' },
});
const short = options.short;
/** @param {string} name @param {string} given @param {number} full @param {number} brief */
const int = (name, given, full, brief) => (given ? positiveInt(name, given) : short ? brief : full);
const WORKERS = int('workers', options.workers, 40, 4);
const SEQUENCES = int('sequences', options.sequences, 16, 4);
const TTFT_MS = int('ttft-ms', options['ttft-ms'], 200, 100);
const TPOT_MS = int('tpot-ms', options['tpot-ms'], 50, 25);
const TOKENS = int('tokens', options.tokens, 64, 16);
const SECONDS = int('seconds', options.seconds, 20, 3);
const BATCH_WORKERS = (options['batch-workers'] || (short ? '1,2,4' : '1,4,16,32'))
  .split(',')
  .map((n) => positiveInt('batch-workers', n));
const BATCH_TOKENS = int('batch-tokens', options['batch-tokens'], 8, 4);
// Enough lines that the most workers still run a few rounds of their sequences each.
const BATCH_LINES = int('batch-lines', options['batch-lines'], 2 * Math.max(...BATCH_WORKERS) * SEQUENCES, 4 * 4 * 4);
const clusterNodes = nodeList(options['redis-cluster-nodes']);

const root = resolve(import.meta.dirname, '..');
const dist = resolve(root, options.dist);
assertBuilt(dist);
const children = new Children(root);
stopChildrenOnSignal();

const redisUrls = clusterNodes.length
  ? clusterNodes.map((n) => `redis://${n}`)
  : [`redis://127.0.0.1:${positiveInt('redis-port', options['redis-port'])}`];
const configFile = join(mkdtempSync(join(os.tmpdir(), 'conveyor-capacity-')), 'conveyor.yaml');
writeFileSync(
  configFile,
  stringify({
    deployments: [
      {
        id: 'sim',
        engine: 'simulated',
        simulated: { ttftMs: TTFT_MS, tpotMs: TPOT_MS, outputTokens: TOKENS },
        parallel: SEQUENCES,
        contextSize: 4096,
      },
    ],
  }),
);
/** @type {Record<string, string>} */
const env = {
  REDIS_URL: redisUrls[0],
  // Passed through: a platform that speaks Redis Cluster reads it, one that does not uses REDIS_URL. Set
  // (empty without the option) so that one in the shell's environment cannot send the processes elsewhere
  // than the Redis the bench measures.
  REDIS_CLUSTER_NODES: clusterNodes.join(','),
  REDIS_PREFIX: `bench-capacity-${randomBytes(4).toString('hex')}`,
  CONVEYOR_CONFIG: configFile,
  HOST: '127.0.0.1',
  UV_THREADPOOL_SIZE: '1',
  MAX_QUEUE_DEPTH: '100000',
};

/** @type {import('./lib/processes.mjs').Child[]} */
const apis = [];
/** @type {string[]} */
const bases = [];
/** @type {import('./lib/processes.mjs').Child[]} */
const workers = [];

async function startApi() {
  const port = await freePort();
  const api = await children.launch(
    `api${apis.length + 1}`,
    process.execPath,
    [join(dist, 'apps/api/src/main.js')],
    { ...env, PORT: String(port) },
    /listening on/,
    120_000,
  );
  apis.push(api);
  bases.push(`http://127.0.0.1:${port}`);
}

/**
 * Starts or stops workers until `n` run, and waits until the API counts them all as live.
 * @param {number} n
 */
async function setWorkers(n) {
  while (workers.length > n) await children.stop(/** @type {import('./lib/processes.mjs').Child} */ (workers.pop()));
  if (workers.length < n)
    workers.push(...(await children.launchWorkers(n - workers.length, { dist, env, first: workers.length + 1 })));
  await waitForLiveWorkers(bases[0], 'sim', n);
}

const apiCpuMs = () => apis.reduce((sum, a) => sum + processCpuMs(a.proc.pid), 0);

/**
 * A measured window of chat load through the API replicas running now: warm-up, then SECONDS measured.
 * @param {RedisNodes} redis
 */
async function chatPhase(redis) {
  const concurrency = WORKERS * SEQUENCES;
  await sleep(1000);
  const memoryBefore = await redis.usedMemory();
  const load = new ChatLoad({ bases, model: 'sim', concurrency, maxTokens: TOKENS });
  load.start();
  await children.watch(sleep(Math.max(2, SECONDS / 4) * 1000 + TTFT_MS + TOKENS * TPOT_MS));
  const r0 = await redis.read();
  const a0 = apiCpuMs();
  const m0 = machineBusyMs();
  const c0 = load.snapshot();
  const t0 = performance.now();
  /** @type {number[]} */
  const inFlightMemory = [];
  const until = t0 + SECONDS * 1000;
  while (performance.now() < until) {
    await children.watch(sleep(500));
    inFlightMemory.push((await redis.usedMemory()) - memoryBefore);
  }
  const r1 = await redis.read();
  const a1 = apiCpuMs();
  const m1 = machineBusyMs();
  const c1 = load.snapshot();
  const wallMs = performance.now() - t0;
  await load.stop();
  await sleep(1500);
  // Every reply of the phase has finished now, warm-up included; what each left behind is its record and job.
  const finishedMemory = (await redis.usedMemory()) - memoryBefore;
  const finished = load.snapshot().requests;
  const d = redisDelta(r0, r1);
  const tokens = c1.tokens - c0.tokens;
  const requests = c1.requests - c0.requests;
  const errors = c1.errors - c0.errors;
  if (!tokens || !requests)
    throw new Error(`no reply finished in the window (errors: ${load.errorSamples.join('; ')})`);
  const apiMs = a1 - a0;
  const expectedReplyMs = TTFT_MS + (TOKENS - 1) * TPOT_MS;
  const topCommands = [...d.calls.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6);
  return {
    apis: apis.length,
    workers: WORKERS,
    concurrency,
    seconds: wallMs / 1000,
    requests,
    tokens,
    errors,
    tokensPerSecond: (tokens * 1000) / wallMs,
    requestsPerSecond: (requests * 1000) / wallMs,
    // How close the replies kept to the simulated pace: 100% is every reply in ttft + (tokens-1) × tpot.
    paceKept: expectedReplyMs / ((c1.replyMs - c0.replyMs) / requests),
    redisCpuMsPer1kTokens: (d.cpuMs * 1000) / tokens,
    redisCpuMsPerRequest: d.cpuMs / requests,
    redisCoreShare: d.cpuMs / wallMs,
    apiCpuMsPer1kTokens: (apiMs * 1000) / tokens,
    apiCpuMsPerRequest: apiMs / requests,
    apiCoreShare: apiMs / wallMs,
    machineBusyShare: (m1 - m0) / wallMs / os.cpus().length,
    redisCommandsPerToken: d.commands / tokens,
    redisCommandsPerRequest: d.commands / requests,
    topCommandsPerRequest: Object.fromEntries(topCommands.map(([name, n]) => [name, n / requests])),
    redisBytesPerInFlightReply: inFlightMemory.reduce((a, b) => a + b, 0) / inFlightMemory.length / concurrency,
    redisBytesPerFinishedReply: finishedMemory / finished,
  };
}

/**
 * One batch on `n` workers, with the CPU of the API, Redis and the machine while it ran.
 * @param {RedisNodes} redis
 * @param {number} n
 */
async function batchPhase(redis, n) {
  await setWorkers(n);
  const r0 = await redis.read();
  const a0 = apiCpuMs();
  const m0 = machineBusyMs();
  const run = await children.watch(runBatch(bases[0], { model: 'sim', lines: BATCH_LINES, maxTokens: BATCH_TOKENS }));
  const r1 = await redis.read();
  const d = redisDelta(r0, r1);
  return {
    workers: n,
    ms: run.ms,
    completed: run.completed,
    failed: run.failed,
    tokens: run.tokens,
    apiCoreShare: (apiCpuMs() - a0) / run.ms,
    redisCoreShare: d.cpuMs / run.ms,
    machineBusyShare: (machineBusyMs() - m0) / run.ms / os.cpus().length,
  };
}

/** What saturated during a run: a process at 90% of its one core, or every core 90% busy. */
const saturated = (/** @type {{ apiCoreShare: number, redisCoreShare: number, machineBusyShare: number }} */ r) =>
  [
    r.apiCoreShare >= 0.9 ? 'the API' : null,
    r.redisCoreShare >= 0.9 ? 'Redis' : null,
    r.machineBusyShare >= 0.9 ? `the machine (${os.cpus().length} cores)` : null,
  ].filter(Boolean);

const pct = (/** @type {number} */ x) => `${(100 * x).toFixed(0)}%`;
const f = (/** @type {number} */ x, digits = 2) => x.toFixed(digits);

let redis = /** @type {RedisNodes | null} */ (null);
/** The Redis servers measured: the bench's own, or a cluster's primaries (its replicas only replay their writes). */
let measuredUrls = redisUrls;
try {
  console.log(runHeader('bench/capacity.bench.mjs').join('\n'));
  console.log(
    `load average: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `simulated deployment: first token ${TTFT_MS} ms, then one each ${TPOT_MS} ms; ${WORKERS} workers × ${SEQUENCES} sequences; ` +
      `chat replies of ${TOKENS} tokens, streamed; batch of ${BATCH_LINES} lines × ${BATCH_TOKENS} tokens on ${BATCH_WORKERS.join(', ')} workers`,
  );
  if (!clusterNodes.length) {
    await children.launchRedis(options['redis-port']);
    console.log(`Redis: a redis-server of the bench's own on port ${options['redis-port']}`);
  } else {
    measuredUrls = (await clusterPrimaries(clusterNodes)).map((node) => `redis://${node}`);
    console.log(
      `Redis: the cluster of ${clusterNodes.join(', ')} (REDIS_CLUSTER_NODES passed to every process); ` +
        `Redis figures summed over its primaries ${measuredUrls.map((u) => new URL(u).host).join(', ')} (replicas only replay their writes)`,
    );
  }
  redis = await RedisNodes.connect(measuredUrls);
  await startApi();

  // The batch first, workers added as it goes: 1, then 4, ...
  const batches = [];
  for (const n of BATCH_WORKERS) {
    const b = await batchPhase(redis, n);
    batches.push(b);
    console.error(`batch on ${n} worker(s): ${f(b.ms / 1000)} s`);
  }
  const base = batches[0];
  const scaling = batches.map((b) => {
    const speedup = base.ms / b.ms;
    const target = 0.8 * (b.workers / base.workers);
    return { ...b, speedup, target, ok: speedup >= target, saturated: saturated(b) };
  });
  const firstSaturated = scaling.find((s) => s.saturated.length);
  const firstShort = scaling.find((s) => !s.ok);

  await setWorkers(WORKERS);
  const chat = [];
  chat.push(await chatPhase(redis));
  console.error(`chat through 1 API replica: ${f(chat[0].tokensPerSecond, 0)} tokens/s`);
  await startApi();
  chat.push(await chatPhase(redis));
  console.error(`chat through 2 API replicas: ${f(chat[1].tokensPerSecond, 0)} tokens/s`);

  // Per unit of work: the figures of the run through one replica, where the API's share is all one process's.
  const one = chat[0];
  const perCore = {
    redisTokensPerSecond: 1e6 / one.redisCpuMsPer1kTokens,
    redisRequestsPerSecond: 1000 / one.redisCpuMsPerRequest,
    apiTokensPerSecond: 1e6 / one.apiCpuMsPer1kTokens,
    apiRequestsPerSecond: 1000 / one.apiCpuMsPerRequest,
  };
  const workerTokensPerSecond = (SEQUENCES * 1000) / TPOT_MS;

  console.log('\nChat (streamed), per unit of work:\n');
  console.log(
    table(
      ['figure', '1 API replica', '2 API replicas'],
      [
        ['tokens/s (all replies)', ...chat.map((c) => f(c.tokensPerSecond, 0))],
        ['requests/s', ...chat.map((c) => f(c.requestsPerSecond, 1))],
        ['pace kept (simulated reply time ÷ measured)', ...chat.map((c) => pct(c.paceKept))],
        ['Redis CPU ms per 1,000 tokens', ...chat.map((c) => f(c.redisCpuMsPer1kTokens))],
        ['Redis CPU ms per request', ...chat.map((c) => f(c.redisCpuMsPerRequest, 3))],
        ['API CPU ms per 1,000 relayed tokens (all replicas)', ...chat.map((c) => f(c.apiCpuMsPer1kTokens))],
        ['API CPU ms per request (all replicas)', ...chat.map((c) => f(c.apiCpuMsPerRequest, 3))],
        ['Redis commands per token', ...chat.map((c) => f(c.redisCommandsPerToken, 3))],
        ['Redis commands per request', ...chat.map((c) => f(c.redisCommandsPerRequest, 1))],
        ['Redis bytes per in-flight reply', ...chat.map((c) => f(c.redisBytesPerInFlightReply, 0))],
        ['Redis bytes per finished reply', ...chat.map((c) => f(c.redisBytesPerFinishedReply, 0))],
        ['Redis core busy', ...chat.map((c) => pct(c.redisCoreShare))],
        ['API cores busy (all replicas)', ...chat.map((c) => pct(c.apiCoreShare))],
        ['machine busy', ...chat.map((c) => pct(c.machineBusyShare))],
        ['errors', ...chat.map((c) => String(c.errors))],
      ],
    ),
  );
  console.log(
    `\nRedis commands per request, the most frequent (1 replica): ${Object.entries(one.topCommandsPerRequest)
      .map(([k, v]) => `${k} ${f(v, 1)}`)
      .join(', ')}`,
  );
  console.log('\nWhat one core carries (1 replica run):\n');
  console.log(
    table(
      ['one core of', 'tokens/s', 'requests/s'],
      [
        ['Redis', f(perCore.redisTokensPerSecond, 0), f(perCore.redisRequestsPerSecond, 0)],
        ['the API', f(perCore.apiTokensPerSecond, 0), f(perCore.apiRequestsPerSecond, 0)],
      ],
    ),
  );
  console.log(
    `\nA worker at ${SEQUENCES} sequences × ${f(1000 / TPOT_MS, 0)} tokens/s = ${f(workerTokensPerSecond, 0)} tokens/s: ` +
      `one Redis core serves ~${f(perCore.redisTokensPerSecond / workerTokensPerSecond, 0)} such workers, one API core ~${f(perCore.apiTokensPerSecond / workerTokensPerSecond, 0)}.`,
  );

  console.log(`\nOne batch of ${BATCH_LINES} lines × ${BATCH_TOKENS} tokens (Files + Batches API, 1 API replica):\n`);
  console.log(
    table(
      ['workers', 'wall s', 'speed-up', '≥ 0.8 × N', 'API core', 'Redis core', 'machine', 'saturated'],
      scaling.map((s) => [
        String(s.workers),
        f(s.ms / 1000),
        f(s.speedup),
        s.ok ? `yes (${f(s.target, 1)})` : `no (${f(s.target, 1)})`,
        pct(s.apiCoreShare),
        pct(s.redisCoreShare),
        pct(s.machineBusyShare),
        s.saturated.join(', ') || '-',
      ]),
    ),
  );
  if (!firstShort) console.log('\nThe speed-up kept to ≥ 0.8 × N on every worker count.');
  else if (firstSaturated && firstSaturated.workers <= firstShort.workers)
    console.log(
      `\nSaturation point: ${firstSaturated.workers} worker(s), where ${firstSaturated.saturated.join(' and ')} ` +
        `saturated; below it the speed-up kept to ≥ 0.8 × N.`,
    );
  else
    console.log(
      `\nThe speed-up fell below 0.8 × N at ${firstShort.workers} workers with neither the API nor Redis saturated.`,
    );

  const problems = children.problems();
  if (problems.length) console.log(`\nWarnings the processes logged (first 10):\n${problems.slice(0, 10).join('\n')}`);
  console.log(
    `\nload average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  if (options.json)
    writeFileSync(options.json, JSON.stringify({ chat, perCore, workerTokensPerSecond, batches: scaling }, null, 2));
} finally {
  redis?.disconnect();
  await children.stopAll();
  // A Redis of the bench's own goes with its process; on nodes of someone else's, the run's keys are removed.
  if (clusterNodes.length) await deleteKeys(measuredUrls, env.REDIS_PREFIX).catch(() => undefined);
}
