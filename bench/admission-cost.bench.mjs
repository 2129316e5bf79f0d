#!/usr/bin/env node
// What one 1-token request costs Redis as the fleet grows: Redis commands per request (INFO commandstats,
// idle traffic subtracted) with 1, 16 and 64 workers registered for the deployment. The admission of a
// request reads what the API knows of the fleet (the workers with a queue of their own, the live ones),
// so that cost may grow with it; a figure that stays level says it does not.
//   node bench/admission-cost.bench.mjs [--fleet 1,16,64] [--requests 200] [--before /path/to/checkout]
//
// What is simulated: one real worker process (engine: simulated, no model) runs every request. The other
// workers of each fleet are registrations only, written as a worker writes them: its name in the set of
// workers with a queue of their own and its id in the live workers, announced for the whole run (so no
// worker takes them for gone). Their own queues are empty, as a live worker's are while it keeps up. That
// is all a request's path reads of another worker; what those workers would send Redis themselves
// (heartbeats, blocking fetches) is idle traffic, subtracted here as the real worker's is.
// `--before`: another checkout with its own `dist/` built; its figures are printed beside this one's.
//
// Beside them, bare BullMQ: the same requests as jobs added by a Queue and run by one Worker in this process,
// with the job options the platform gives a `default` request (its priority, two attempts, the completed
// jobs' retention) and the worker's lock settings, on a redis-server of its own, counted the same way. What
// the platform costs over that is its own share: admission, usage, the reply's way back, routing.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { HttpClient } from './lib/http.mjs';
import { Children, stopChildrenOnSignal } from './lib/processes.mjs';
import { RedisNodes, redisDelta } from './lib/redis-info.mjs';
import { assertBuilt, runHeader } from './lib/report.mjs';
import { sleep, table } from './lib/stats.mjs';

const USAGE =
  'usage: node bench/admission-cost.bench.mjs [--fleet 1,16,64] [--requests 200] [--inflight 40] [--before /path/to/checkout]';
const options = parseCli(USAGE, {
  fleet: { type: 'string', default: '1,16,64' },
  requests: { type: 'string', default: '200' },
  inflight: { type: 'string', default: '40' },
  before: { type: 'string', default: '' },
});
const FLEETS = options.fleet.split(',').map((n) => positiveInt('fleet', n));
const REQUESTS = positiveInt('requests', options.requests);
/** Sequences of the one real worker (and the bare BullMQ worker's concurrency). */
const PARALLEL = 8;
/** Requests in flight at once. */
const INFLIGHT = positiveInt('inflight', options.inflight);
const DEPLOYMENT = 'sim';
const here = resolve(import.meta.dirname, '..');
const builds = [
  ...(options.before ? [{ name: 'before', root: resolve(options.before) }] : []),
  { name: 'this', root: here },
];
for (const build of builds) assertBuilt(join(build.root, 'dist'));

const configFile = join(mkdtempSync(join(os.tmpdir(), 'conveyor-admission-')), 'conveyor.yaml');
writeFileSync(
  configFile,
  stringify({
    deployments: [
      {
        id: DEPLOYMENT,
        engine: 'simulated',
        simulated: { ttftMs: 5, tpotMs: 5, outputTokens: 1 },
        parallel: PARALLEL,
        contextSize: 4096,
      },
    ],
  }),
);

/**
 * One request of one token; resolves once its reply has come.
 * @param {HttpClient} http @param {string} url @param {number} i
 */
async function one(http, url, i) {
  const body = {
    model: DEPLOYMENT,
    messages: [{ role: 'user', content: `Request ${i}: one word.` }],
    max_tokens: 1,
  };
  const reply = JSON.parse(await http.call(`${url}/v1/chat/completions`, { method: 'POST', body }));
  if (reply.usage?.completion_tokens !== 1) throw new Error(`unexpected reply: ${JSON.stringify(reply).slice(0, 300)}`);
}

/** `n` requests, INFLIGHT in flight. @param {HttpClient} http @param {string} url @param {number} n */
async function load(http, url, n) {
  let next = 0;
  const lane = async () => {
    while (next < n) await one(http, url, next++);
  };
  await Promise.all(Array.from({ length: INFLIGHT }, lane));
}

/**
 * Registers `n` workers besides the real one, as workers register: a queue of their own, and live (their
 * announcement lapsing after the run). Key names come from the build's own queue contract.
 * @param {import('ioredis').Redis} redis @param {string} prefix @param {number} n @param {string} root
 */
async function register(redis, prefix, n, root) {
  const queue = await import(pathToFileURL(join(root, 'dist/libs/queue/src/index.js')).href);
  const until = Date.now() + 3_600_000;
  const pipeline = redis.pipeline();
  for (let i = 0; i < n; i++) {
    const id = `registered-${i}:${1000 + i}`;
    pipeline.sadd(queue.routeQueuesKey(prefix, DEPLOYMENT), queue.routeWorkerName(id));
    pipeline.zadd(queue.liveWorkersKey(prefix, DEPLOYMENT), until, id);
  }
  await pipeline.exec();
}

/**
 * @typedef {{ fleet: number, perRequest: number, top: string, calls: Map<string, number> }} Figure
 */

/**
 * Commands and their counts a request, most first, those under 0.5 left out.
 * @param {Map<string, number>} calls @param {number} most
 */
const listed = (calls, most) =>
  [...calls]
    .filter(([, n]) => n >= 0.05)
    .sort((x, y) => y[1] - x[1])
    .slice(0, most)
    .map(([name, n]) => `${name} ${n.toFixed(1)}`)
    .join(', ');

/**
 * Redis commands per request of `run` (REQUESTS of them), with the idle traffic of the 3 s before it
 * subtracted at its rate, and the commands run most.
 * @param {RedisNodes} nodes @param {() => Promise<unknown>} run
 * @returns {Promise<{ perRequest: number, top: string, calls: Map<string, number> }>}
 */
async function counted(nodes, run) {
  await sleep(1500);
  const idle0 = await nodes.read();
  const idleStart = Date.now();
  await sleep(3000);
  const idle1 = await nodes.read();
  const idleSpan = Date.now() - idleStart;
  const idle = redisDelta(idle0, idle1);
  const a = await nodes.read();
  const start = Date.now();
  await run();
  await sleep(1000);
  const b = await nodes.read();
  const span = Date.now() - start;
  const d = redisDelta(a, b);
  const perRequest = (d.commands - (idle.commands / idleSpan) * span) / REQUESTS;
  const calls = new Map(
    [...d.calls].map(([name, n]) => [name, (n - ((idle.calls.get(name) ?? 0) / idleSpan) * span) / REQUESTS]),
  );
  return { perRequest, top: listed(calls, 10), calls };
}

/**
 * The same requests as bare BullMQ jobs: a Queue adds each with the options the platform gives a
 * `default` request, one Worker of PARALLEL concurrency with the platform worker's lock settings runs
 * it (a 5 ms wait, as the simulated engine's first token) and returns a small result, INFLIGHT at once.
 * The job's end is heard in this process (the worker's own event), as nothing of Redis's.
 * @returns {Promise<{ perRequest: number, top: string, calls: Map<string, number> }>}
 */
async function measureBare() {
  const children = new Children(here);
  /** @type {RedisNodes | null} */
  let nodes = null;
  const { Queue, Worker } = await import('bullmq');
  try {
    const redisUrl = await children.launchRedis();
    nodes = await RedisNodes.connect([redisUrl]);
    const { port } = new URL(redisUrl);
    const connection = { host: '127.0.0.1', port: Number(port), maxRetriesPerRequest: null };
    const prefix = `bench-bare-${randomBytes(4).toString('hex')}`;
    const queue = new Queue('sim', { connection, prefix });
    /** @type {Map<string, () => void>} */
    const waiting = new Map();
    const worker = new Worker(
      'sim',
      async () => {
        await sleep(5);
        return { text: 'x', usage: { prompt_tokens: 12, completion_tokens: 1 } };
      },
      { connection, prefix, concurrency: PARALLEL, lockDuration: 30_000, stalledInterval: 30_000, maxStalledCount: 1 },
    );
    worker.on('completed', (job) => waiting.get(/** @type {string} */ (job.id))?.());
    let id = 0;
    const one = async () => {
      const jobId = `r-${id++}`;
      const done = new Promise((resolve) => waiting.set(jobId, () => resolve(undefined)));
      await queue.add(
        'chat',
        { messages: [{ role: 'user', content: `Request ${id}: one word.` }] },
        {
          jobId,
          attempts: 2,
          backoff: { type: 'fixed', delay: 100 },
          // A `default` request's band, and the retention of JOB_RETENTION_SECONDS's default (an hour).
          priority: 1,
          removeOnComplete: { age: 3600, count: 10000 },
          removeOnFail: { age: 24 * 3600 },
        },
      );
      await done;
      waiting.delete(jobId);
    };
    const bareLoad = async (/** @type {number} */ n) => {
      let next = 0;
      const lane = async () => {
        while (next++ < n) await one();
      };
      await Promise.all(Array.from({ length: INFLIGHT }, lane));
    };
    await bareLoad(INFLIGHT * 2);
    const figure = await counted(nodes, () => bareLoad(REQUESTS));
    await worker.close();
    await queue.close();
    return figure;
  } finally {
    nodes?.disconnect();
    await children.stopAll();
  }
}

/** @param {{ name: string, root: string }} build @returns {Promise<Figure[]>} */
async function measure(build) {
  const children = new Children(build.root);
  const prefix = `bench-admission-${randomBytes(4).toString('hex')}`;
  const http = new HttpClient();
  /** @type {Figure[]} */
  const figures = [];
  /** @type {RedisNodes | null} */
  let nodes = null;
  try {
    const redisUrl = await children.launchRedis();
    nodes = await RedisNodes.connect([redisUrl]);
    const { Redis } = await import('ioredis');
    const writer = new Redis(redisUrl);
    const url = await children.launchPlatform({ redisUrl, prefix, configFile, env: { MAX_QUEUE_DEPTH: '100000' } });
    let registered = 1;
    try {
      for (const fleet of FLEETS) {
        if (fleet > registered) await register(writer, prefix, fleet - registered, build.root);
        registered = Math.max(registered, fleet);
        await children.watch(load(http, url, INFLIGHT * 2));
        const { perRequest, top, calls } = await counted(nodes, () => children.watch(load(http, url, REQUESTS)));
        figures.push({ fleet, perRequest, top, calls });
        console.error(`${build.name}: ${fleet} workers: ${perRequest.toFixed(1)} commands a request`);
      }
    } finally {
      writer.disconnect();
    }
  } finally {
    nodes?.disconnect();
    await children.stopAll();
  }
  return figures;
}

stopChildrenOnSignal();
/** @param {string} root */
const commit = (root) => execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
console.log('# Redis commands per 1-token request, by the workers registered for its deployment');
for (const line of runHeader('bench/admission-cost.bench.mjs')) console.log(line);
console.log(`builds: ${builds.map((b) => `${b.name} = ${commit(b.root)}`).join(', ')}`);
console.log(
  `one real worker (engine: simulated, ${PARALLEL} sequences), the rest of each fleet registered only; ` +
    `${REQUESTS} non-streamed chat completions of 1 token, ${INFLIGHT} in flight; a redis-server of its own per build\n`,
);
/** @type {Map<string, Figure[]>} */
const results = new Map();
for (const build of builds) results.set(build.name, await measure(build));
const bare = await measureBare();
console.error(`bare BullMQ: ${bare.perRequest.toFixed(1)} commands a job`);
console.log(
  table(
    [
      'workers',
      ...builds.map((b) => `commands/request (${b.name})`),
      'bare BullMQ, same jobs',
      ...builds.map((b) => `platform's own share (${b.name})`),
    ],
    FLEETS.map((fleet, i) => [
      String(fleet),
      ...builds.map((b) => (results.get(b.name)?.[i]?.perRequest ?? NaN).toFixed(1)),
      bare.perRequest.toFixed(1),
      ...builds.map((b) => ((results.get(b.name)?.[i]?.perRequest ?? NaN) - bare.perRequest).toFixed(1)),
    ]),
  ),
);
console.log('\nCommands per request, most run first (idle traffic subtracted):');
for (const build of builds)
  for (const f of results.get(build.name) ?? []) console.log(`- ${f.fleet} workers (${build.name}): ${f.top}`);
console.log(`- bare BullMQ: ${bare.top}`);
console.log("\nThe platform's own share by command (a request's commands less bare BullMQ's, 0.05 or more):");
for (const build of builds)
  for (const f of results.get(build.name) ?? []) {
    const names = new Set([...f.calls.keys(), ...bare.calls.keys()]);
    const extra = new Map([...names].map((name) => [name, (f.calls.get(name) ?? 0) - (bare.calls.get(name) ?? 0)]));
    console.log(`- ${f.fleet} workers (${build.name}): ${listed(extra, 20)}`);
  }
