#!/usr/bin/env node
// What the broker pays for generated tokens: Redis commands, bytes sent to Redis, bytes Redis keeps once
// replies have finished, and CPU (Redis's own, the API's), per generated token and per request. Counts,
// not times, so a noisy machine still gives the same figures. Each build runs on its own private
// redis-server, with the idle traffic of its processes (heartbeats, checks) measured first and subtracted.
//   node bench/broker-cost.bench.mjs [--before /path/to/other/checkout] [--quick]
//     [--redis-cluster | --redis-cluster-nodes host:port,...]
// `--before`: a checkout of another commit with its own `dist/` built (`npm run build` there): the same
// workloads run on it first, and the table puts the two side by side.
// `--redis-cluster`: each build on a Redis Cluster of its own instead (three primaries, a replica each,
// on loopback); `--redis-cluster-nodes`: on the given cluster. Either way every Redis figure is the sum
// over the cluster's primaries: a replica only replays its primary's writes.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { LoopbackCluster } from '../test/support/loopback-cluster.mjs';
import { parseCli } from './lib/cli.mjs';
import { HttpClient } from './lib/http.mjs';
import { Children, freePort, stopChildrenOnSignal } from './lib/processes.mjs';
import { deleteKeys } from './lib/redis.mjs';
import { clusterPrimaries, nodeList, processCpuMs, RedisNodes, redisDelta } from './lib/redis-info.mjs';
import { sleep, table } from './lib/stats.mjs';

const USAGE = `usage: node bench/broker-cost.bench.mjs [--before /path/to/checkout] [--quick]
  [--redis-cluster | --redis-cluster-nodes host:port,...]`;
const options = parseCli(USAGE, {
  before: { type: 'string', default: '' },
  quick: { type: 'boolean', default: false },
  'redis-cluster': { type: 'boolean', default: false },
  'redis-cluster-nodes': { type: 'string', default: '' },
});
const clusterSeeds = nodeList(options['redis-cluster-nodes']);
if (options['redis-cluster'] && clusterSeeds.length) {
  console.error(
    `--redis-cluster starts a cluster of the bench's own; --redis-cluster-nodes names one: not both\n${USAGE}`,
  );
  process.exit(2);
}
const onCluster = options['redis-cluster'] || clusterSeeds.length > 0;
const here = resolve(import.meta.dirname, '..');
const builds = [
  ...(options.before ? [{ name: 'before', root: resolve(options.before) }] : []),
  { name: 'this', root: here },
];
const scale = options.quick ? 0.25 : 1;
/** Replies running at once on the one worker: the worker has as many sequences. */
const PARALLEL = 8;

/** @typedef {{ name: string, requests: number, maxTokens: number, stream: boolean }} Workload */
/** @type {Workload[]} */
const WORKLOADS = [
  { name: `sync × 200 tokens`, requests: Math.max(8, Math.round(24 * scale)), maxTokens: 200, stream: false },
  { name: `streamed × 200 tokens`, requests: Math.max(8, Math.round(24 * scale)), maxTokens: 200, stream: true },
  {
    name: `streamed × ${options.quick ? 400 : 1000} tokens`,
    requests: 8,
    maxTokens: options.quick ? 400 : 1000,
    stream: true,
  },
  { name: `sync × 1 token`, requests: Math.max(8, Math.round(40 * scale)), maxTokens: 1, stream: false },
];

/**
 * @typedef {object} Snapshot
 * @property {import('./lib/redis-info.mjs').RedisCounters} redis every command Redis ran (scripts' inner
 *   calls included, as commandstats counts them), bytes clients sent it, its CPU, summed over the nodes measured
 * @property {number} apiCpuMs the API process's CPU time
 * @property {number} at
 */

/** @param {RedisNodes} nodes @param {number} apiPid @returns {Promise<Snapshot>} */
async function snapshot(nodes, apiPid) {
  return { redis: await nodes.read(), apiCpuMs: processCpuMs(apiPid), at: Date.now() };
}

/**
 * Bytes Redis keeps of finished replies under `prefix`, for a client to resume or collect them for
 * `REPLY_TTL_MS`: a reply's own stream (`:reply:<id>`, before the inboxes) or its record (`:replied:<id>`).
 * An inbox's entries are trimmed within seconds of being read, so they are not counted.
 * @param {RedisNodes} nodes @param {string} prefix
 */
const replyBytes = (nodes, prefix) => nodes.keyBytes(`${prefix}:*`, (key) => /:(reply|replied):/.test(key));

/**
 * One request; resolves with its completion tokens.
 * @param {HttpClient} http @param {string} url @param {Workload} w @param {number} i
 */
async function one(http, url, w, i) {
  const body = {
    model: 'conveyor-tiny',
    messages: [{ role: 'user', content: `Request ${i}: write a long story about brokers.` }],
    max_tokens: w.maxTokens,
    temperature: 0,
  };
  if (w.stream) return (await http.streamChat(`${url}/v1/chat/completions`, body)).tokens;
  const reply = JSON.parse(await http.call(`${url}/v1/chat/completions`, { method: 'POST', body }));
  return reply.usage.completion_tokens;
}

/** Runs `w` with PARALLEL requests in flight; resolves with the tokens generated. */
async function run(/** @type {HttpClient} */ http, /** @type {string} */ url, /** @type {Workload} */ w) {
  let next = 0;
  let tokens = 0;
  const lane = async () => {
    while (next < w.requests) {
      const generated = await one(http, url, w, next++);
      tokens += generated;
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, lane));
  return tokens;
}

/**
 * `byNode`: each measured node's share of the commands (one entry on a single Redis).
 * @typedef {{ commands: number, bytes: number, keptBytes: number, redisCpuMs: number, apiCpuMs: number, tokens: number, requests: number, top: string, byNode: string }} Cost
 */

/**
 * The commands a workload ran most, per request, idle traffic subtracted: `xadd 12.5, evalsha 9.0, ...`.
 * @param {Map<string, number>} calls the workload's calls by command
 * @param {number} span its length, ms
 * @param {number} requests
 * @param {(name: string) => number} idlePerMs idle calls of a command per millisecond
 */
const topCommands = (calls, span, requests, idlePerMs) =>
  [...calls]
    .map(([name, n]) => /** @type {[string, number]} */ ([name, (n - idlePerMs(name) * span) / requests]))
    .filter(([, n]) => n >= 0.5)
    .sort((x, y) => y[1] - x[1])
    .slice(0, 8)
    .map(([name, n]) => `${name} ${n.toFixed(1)}`)
    .join(', ');

/**
 * The Redis a build runs on: a redis-server of its own; with `--redis-cluster`, a loopback cluster of its
 * own; with `--redis-cluster-nodes`, the given cluster. `measured`: the nodes whose figures are summed
 * (a cluster's primaries). `close` stops what was started, or removes the run's keys from the given cluster.
 * @param {Children} children
 * @param {string} prefix
 * @returns {Promise<{ env: Record<string, string>, measured: string[], close: () => Promise<unknown> }>}
 */
async function openRedis(children, prefix) {
  if (!onCluster) {
    const url = await children.launchRedis();
    // REDIS_CLUSTER_NODES set, empty, so that one in the shell's environment cannot send the processes elsewhere.
    return { env: { REDIS_URL: url, REDIS_CLUSTER_NODES: '' }, measured: [url], close: async () => {} };
  }
  /** @type {LoopbackCluster | null} */
  let own = null;
  if (options['redis-cluster']) {
    // A long node timeout: on a loaded machine a node slow to answer must not be failed over mid-run.
    own = await LoopbackCluster.start({ nodeTimeoutMs: 15_000 });
  }
  const seeds = own ? own.seeds.split(',') : clusterSeeds;
  /** @type {string[]} */
  let primaries;
  try {
    primaries = await clusterPrimaries(seeds);
  } catch (err) {
    await own?.stop();
    throw err;
  }
  const measured = primaries.map((node) => `redis://${node}`);
  /** @type {Promise<unknown> | null} */
  let closing = null;
  return {
    // With cluster seeds the platform uses only REDIS_URL's password and scheme.
    env: { REDIS_URL: `redis://${seeds[0]}`, REDIS_CLUSTER_NODES: seeds.join(',') },
    measured,
    // Once: Ctrl-C may come while the run's own close is under way, and the bench waits for that one.
    close: () => (closing ??= own ? own.stop() : deleteKeys(measured, prefix)),
  };
}

/**
 * What closes the Redis of the build being measured, run on Ctrl-C too: a cluster of the bench's own is
 * stopped (its nodes would die with the bench anyway), the run's keys removed from a given one.
 * @type {Set<() => Promise<unknown>>}
 */
const closeOnSignal = new Set();

/** @param {{ name: string, root: string }} build @returns {Promise<Map<string, Cost>>} */
async function measure(build) {
  const children = new Children(build.root);
  const apiPort = await freePort();
  const prefix = `bench-broker-${randomBytes(4).toString('hex')}`;
  /** @type {Map<string, Cost>} */
  const costs = new Map();
  const http = new HttpClient();
  /** @type {(() => Promise<unknown>) | null} */
  let closeRedis = null;
  /** @type {RedisNodes | null} */
  let nodes = null;
  try {
    const redis = await openRedis(children, prefix);
    closeRedis = redis.close;
    closeOnSignal.add(closeRedis);
    nodes = await RedisNodes.connect(redis.measured);
    if (onCluster) console.error(`${build.name}: Redis figures summed over the primaries ${nodes.names.join(', ')}`);
    const env = {
      ...redis.env,
      REDIS_PREFIX: prefix,
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      MODEL: 'tiny',
      PARALLEL: String(PARALLEL),
      CONTEXT_SIZE: '2048',
      UV_THREADPOOL_SIZE: '1',
    };
    const api = await children.launch('api', process.execPath, ['dist/apps/api/src/main.js'], env, /listening on/i);
    await children.launch('worker', process.execPath, ['dist/apps/worker/src/main.js'], env, /Worker ready/);
    const url = `http://127.0.0.1:${apiPort}`;
    const apiPid = /** @type {number} */ (api.proc.pid);
    // Warm-up: the first requests load caches and open connections.
    await children.watch(run(http, url, { name: 'warm-up', requests: PARALLEL, maxTokens: 16, stream: true }));
    await sleep(1500);
    const idle0 = await snapshot(nodes, apiPid);
    await sleep(3000);
    const idle1 = await snapshot(nodes, apiPid);
    const idleSpan = idle1.at - idle0.at;
    const idleRedis = redisDelta(idle0.redis, idle1.redis);
    /** Idle traffic per ms: what the platform sends Redis with no request running. */
    const idle = {
      commands: idleRedis.commands / idleSpan,
      bytes: idleRedis.inputBytes / idleSpan,
      cpuMs: idleRedis.cpuMs / idleSpan,
      apiCpuMs: (idle1.apiCpuMs - idle0.apiCpuMs) / idleSpan,
      nodeCalls: idleRedis.nodeCalls.map((n) => n / idleSpan),
    };
    for (const w of WORKLOADS) {
      const keptBefore = await replyBytes(nodes, prefix);
      const a = await snapshot(nodes, apiPid);
      const tokens = await children.watch(run(http, url, w));
      await sleep(1000);
      const b = await snapshot(nodes, apiPid);
      const span = b.at - a.at;
      const d = redisDelta(a.redis, b.redis);
      const nodeCommands = d.nodeCalls.map((n, i) => Math.max(0, n - (idle.nodeCalls[i] ?? 0) * span));
      const nodeTotal = nodeCommands.reduce((x, y) => x + y, 0);
      costs.set(w.name, {
        commands: d.commands - idle.commands * span,
        bytes: d.inputBytes - idle.bytes * span,
        keptBytes: (await replyBytes(nodes, prefix)) - keptBefore,
        redisCpuMs: d.cpuMs - idle.cpuMs * span,
        apiCpuMs: b.apiCpuMs - a.apiCpuMs - idle.apiCpuMs * span,
        tokens,
        requests: w.requests,
        top: topCommands(d.calls, span, w.requests, (name) => (idleRedis.calls.get(name) ?? 0) / idleSpan),
        byNode: nodes.names
          .map((name, i) => `${name} ${((100 * (nodeCommands[i] ?? 0)) / (nodeTotal || 1)).toFixed(0)}%`)
          .join(', '),
      });
      console.error(`${build.name}: ${w.name} done (${tokens} tokens)`);
    }
  } finally {
    nodes?.disconnect();
    await children.stopAll();
    if (closeRedis) {
      await closeRedis().catch((err) => console.error(`${build.name}: closing Redis: ${err}`));
      closeOnSignal.delete(closeRedis);
    }
  }
  return costs;
}

stopChildrenOnSignal(() => Promise.all([...closeOnSignal].map((close) => close())));
/** The commit a checkout is at, short. @param {string} root */
const commit = (root) => execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
console.log(`# Broker cost per generated token and per request`);
console.log(`command: node bench/broker-cost.bench.mjs ${process.argv.slice(2).join(' ')}`.trim());
console.log(`builds: ${builds.map((b) => `${b.name} = ${commit(b.root)}`).join(', ')}`);
console.log(`one worker, ${PARALLEL} sequences, ${PARALLEL} requests in flight, model conveyor-tiny, temperature 0`);
console.log(
  options['redis-cluster']
    ? 'Redis: a Redis Cluster of its own per build (3 primaries, a replica each, on loopback); every Redis figure is summed over the primaries (replicas only replay their writes)\n'
    : clusterSeeds.length
      ? `Redis: the Redis Cluster of ${clusterSeeds.join(', ')}; every Redis figure is summed over its primaries (replicas only replay their writes)\n`
      : 'Redis: a redis-server of its own per build\n',
);
/** @type {Map<string, Map<string, Cost>>} */
const results = new Map();
for (const build of builds) results.set(build.name, await measure(build));

const fmt = (/** @type {number} */ n, /** @type {number} */ digits = 2) =>
  Number.isFinite(n) ? n.toFixed(digits) : '–';
const rows = [];
for (const w of WORKLOADS) {
  for (const build of builds) {
    const c = /** @type {Cost} */ (results.get(build.name)?.get(w.name));
    const perToken = w.maxTokens > 1;
    rows.push([
      `${w.requests} ${w.name} (${build.name})`,
      fmt(c.commands / c.requests, 1),
      perToken ? fmt(c.commands / c.tokens, 3) : '–',
      fmt(c.bytes / c.requests / 1024, 1),
      perToken ? fmt(c.keptBytes / c.tokens, 1) : fmt(c.keptBytes / c.requests, 0),
      fmt((c.redisCpuMs / c.tokens) * 1000, 0),
      fmt((c.apiCpuMs / c.tokens) * 1000, 0),
      fmt(c.redisCpuMs / c.requests, 2),
    ]);
  }
}
console.log(
  table(
    [
      'workload',
      'commands/request',
      'commands/token',
      'KB sent/request',
      'bytes kept/token (1-token: /request)',
      'Redis CPU ms/1k tokens',
      'API CPU ms/1k tokens',
      'Redis CPU ms/request',
    ],
    rows,
  ),
);
console.log('\nCommands per request, most run first (idle traffic subtracted):');
for (const w of WORKLOADS)
  for (const build of builds) console.log(`- ${w.name} (${build.name}): ${results.get(build.name)?.get(w.name)?.top}`);
if (onCluster) {
  console.log("\nEach primary's share of the commands (idle traffic subtracted):");
  for (const w of WORKLOADS)
    for (const build of builds)
      console.log(`- ${w.name} (${build.name}): ${results.get(build.name)?.get(w.name)?.byNode}`);
}
