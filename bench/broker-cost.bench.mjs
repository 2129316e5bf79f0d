#!/usr/bin/env node
// What the broker pays for generated tokens: Redis commands, bytes sent to Redis, bytes Redis keeps once
// replies have finished, and CPU (Redis's own, the API's), per generated token and per request. Counts,
// not times, so a noisy machine still gives the same figures. Each build runs on its own private
// redis-server, with the idle traffic of its processes (heartbeats, checks) measured first and subtracted.
//   node bench/broker-cost.bench.mjs [--before /path/to/other/checkout] [--quick]
// `--before`: a checkout of another commit with its own `dist/` built (`npm run build` there): the same
// workloads run on it first, and the table puts the two side by side.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { parseCli } from './lib/cli.mjs';
import { HttpClient } from './lib/http.mjs';
import { Children, freePort, stopChildrenOnSignal } from './lib/processes.mjs';
import { sleep, table } from './lib/stats.mjs';

const USAGE = 'usage: node bench/broker-cost.bench.mjs [--before /path/to/checkout] [--quick]';
const options = parseCli(USAGE, {
  before: { type: 'string', default: '' },
  quick: { type: 'boolean', default: false },
});
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
 * @property {number} commands every command Redis ran (scripts' inner calls included, as commandstats counts them)
 * @property {number} inputBytes bytes clients sent to Redis
 * @property {number} cpuMs Redis's CPU time, user and system
 * @property {number} apiCpuMs the API process's CPU time
 * @property {number} at
 * @property {Map<string, number>} calls calls by command
 */

/** @param {string} info @param {string} field */
const infoNumber = (info, field) => Number(new RegExp(`^${field}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0);

/** CPU ms of a process, from /proc (user + system). @param {number} pid */
function processCpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** @param {Redis} redis @param {number} apiPid @returns {Promise<Snapshot>} */
async function snapshot(redis, apiPid) {
  const [commandstats, stats, cpu] = await Promise.all([
    redis.info('commandstats'),
    redis.info('stats'),
    redis.info('cpu'),
  ]);
  let commands = 0;
  const calls = new Map();
  for (const m of commandstats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    commands += Number(m[2]);
    calls.set(m[1], Number(m[2]));
  }
  return {
    commands,
    inputBytes: infoNumber(stats, 'total_net_input_bytes'),
    cpuMs: (infoNumber(cpu, 'used_cpu_user') + infoNumber(cpu, 'used_cpu_sys')) * 1000,
    apiCpuMs: processCpuMs(apiPid),
    at: Date.now(),
    calls,
  };
}

/**
 * Bytes Redis keeps of finished replies under `prefix`, for a client to resume or collect them for
 * `REPLY_TTL_MS`: a reply's own stream (`:reply:<id>`, before the inboxes) or its record (`:replied:<id>`).
 * An inbox's entries are trimmed within seconds of being read, so they are not counted.
 * @param {Redis} redis @param {string} prefix
 */
async function replyBytes(redis, prefix) {
  let bytes = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      if (!/:(reply|replied):/.test(key)) continue;
      bytes += (await redis.memory('USAGE', key, 'SAMPLES', '0')) ?? 0;
    }
  } while (cursor !== '0');
  return bytes;
}

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

/** @typedef {{ commands: number, bytes: number, keptBytes: number, redisCpuMs: number, apiCpuMs: number, tokens: number, requests: number, top: string }} Cost */

/**
 * The commands a workload ran most, per request, idle traffic subtracted: `xadd 12.5, evalsha 9.0, ...`.
 * @param {Snapshot} a @param {Snapshot} b @param {number} requests
 * @param {(name: string) => number} idlePerMs idle calls of a command per millisecond
 */
const topCommands = (a, b, requests, idlePerMs) =>
  [...b.calls]
    .map(([name, n]) => {
      const calls = n - (a.calls.get(name) ?? 0) - idlePerMs(name) * (b.at - a.at);
      return /** @type {[string, number]} */ ([name, calls / requests]);
    })
    .filter(([, n]) => n >= 0.5)
    .sort((x, y) => y[1] - x[1])
    .slice(0, 8)
    .map(([name, n]) => `${name} ${n.toFixed(1)}`)
    .join(', ');

/** @param {{ name: string, root: string }} build @returns {Promise<Map<string, Cost>>} */
async function measure(build) {
  const children = new Children(build.root);
  const redisPort = await freePort();
  const apiPort = await freePort();
  const prefix = `bench-broker-${randomBytes(4).toString('hex')}`;
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const env = {
    REDIS_URL: redisUrl,
    REDIS_PREFIX: prefix,
    PORT: String(apiPort),
    HOST: '127.0.0.1',
    MODEL: 'tiny',
    PARALLEL: String(PARALLEL),
    CONTEXT_SIZE: '2048',
    UV_THREADPOOL_SIZE: '1',
  };
  /** @type {Map<string, Cost>} */
  const costs = new Map();
  const http = new HttpClient();
  try {
    await children.launch(
      'redis',
      'redis-server',
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {},
      /Ready to accept connections/,
    );
    const api = await children.launch('api', process.execPath, ['dist/apps/api/src/main.js'], env, /listening on/i);
    await children.launch('worker', process.execPath, ['dist/apps/worker/src/main.js'], env, /Worker ready/);
    const redis = new Redis(redisUrl);
    const url = `http://127.0.0.1:${apiPort}`;
    const apiPid = /** @type {number} */ (api.proc.pid);
    // Warm-up: the first requests load caches and open connections.
    await children.watch(run(http, url, { name: 'warm-up', requests: PARALLEL, maxTokens: 16, stream: true }));
    await sleep(1500);
    const idle0 = await snapshot(redis, apiPid);
    await sleep(3000);
    const idle1 = await snapshot(redis, apiPid);
    const idleSpan = idle1.at - idle0.at;
    /** Idle traffic per ms: what the platform sends Redis with no request running. */
    const idle = {
      commands: (idle1.commands - idle0.commands) / idleSpan,
      bytes: (idle1.inputBytes - idle0.inputBytes) / idleSpan,
      cpuMs: (idle1.cpuMs - idle0.cpuMs) / idleSpan,
      apiCpuMs: (idle1.apiCpuMs - idle0.apiCpuMs) / idleSpan,
    };
    for (const w of WORKLOADS) {
      const keptBefore = await replyBytes(redis, prefix);
      const a = await snapshot(redis, apiPid);
      const tokens = await children.watch(run(http, url, w));
      await sleep(1000);
      const b = await snapshot(redis, apiPid);
      const span = b.at - a.at;
      costs.set(w.name, {
        commands: b.commands - a.commands - idle.commands * span,
        bytes: b.inputBytes - a.inputBytes - idle.bytes * span,
        keptBytes: (await replyBytes(redis, prefix)) - keptBefore,
        redisCpuMs: b.cpuMs - a.cpuMs - idle.cpuMs * span,
        apiCpuMs: b.apiCpuMs - a.apiCpuMs - idle.apiCpuMs * span,
        tokens,
        requests: w.requests,
        top: topCommands(
          a,
          b,
          w.requests,
          (name) => ((idle1.calls.get(name) ?? 0) - (idle0.calls.get(name) ?? 0)) / idleSpan,
        ),
      });
      console.error(`${build.name}: ${w.name} done (${tokens} tokens)`);
    }
    redis.disconnect();
  } finally {
    await children.stopAll();
  }
  return costs;
}

stopChildrenOnSignal();
/** The commit a checkout is at, short. @param {string} root */
const commit = (root) => execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
console.log(`# Broker cost per generated token and per request`);
console.log(`command: node bench/broker-cost.bench.mjs ${process.argv.slice(2).join(' ')}`.trim());
console.log(`builds: ${builds.map((b) => `${b.name} = ${commit(b.root)}`).join(', ')}`);
console.log(`one worker, ${PARALLEL} sequences, ${PARALLEL} requests in flight, model conveyor-tiny, temperature 0\n`);
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
