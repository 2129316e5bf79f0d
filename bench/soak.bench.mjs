#!/usr/bin/env node
// Soak: a few thousand mixed requests through the platform, watching API and worker memory (RSS)
// and the Redis memory of the run's keys, then checking they return near their baseline once
// reply streams and finished jobs expire (short TTLs are set for the run).
//   node bench/soak.bench.mjs [--requests 3000] [--concurrency 16]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';

const ROOT = resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: { requests: { type: 'string', default: '3000' }, concurrency: { type: 'string', default: '16' } },
});
const TOTAL = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `soak-${randomBytes(4).toString('hex')}`;
const TTL_MS = 5000;

/** @type {number} */
const port = await new Promise((r) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    // A TCP server's address is an AddressInfo (a string only for a pipe or socket path).
    const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
    s.close(() => r(port));
  });
});
const env = {
  ...process.env,
  PORT: String(port),
  HOST: '127.0.0.1',
  REDIS_URL,
  REDIS_PREFIX: prefix,
  MODEL: 'tiny',
  PARALLEL: '4',
  LOG_LEVEL: 'warn',
  REPLY_TTL_MS: String(TTL_MS),
  JOB_RETENTION_SECONDS: '5',
  MAX_QUEUE_DEPTH: '100000',
};
/**
 * Starts `node script` and resolves once its stdout matches `ready`.
 * @param {string} script
 * @param {RegExp} ready
 * @returns {Promise<import('node:child_process').ChildProcessByStdio<null, import('node:stream').Readable, null>>}
 */
const launch = (script, ready) =>
  new Promise((ok, fail) => {
    const proc = spawn(process.execPath, [join(ROOT, script)], {
      env: { ...env, LOG_LEVEL: 'log' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    proc.stdout.on('data', (c) => ready.test(c.toString()) && ok(proc));
    proc.once('exit', (code) => fail(new Error(`${script} exited ${code}`)));
  });

/**
 * Resident memory of a process, in MiB.
 * @param {number | undefined} pid
 */
const rss = (pid) => {
  const kib = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1];
  if (kib === undefined) throw new Error(`/proc/${pid}/status has no VmRSS line`);
  return Number(kib) / 1024;
};
const redis = new Redis(REDIS_URL);
async function redisHeld() {
  let bytes = 0;
  const keys = await redis.keys(`${prefix}:*`);
  for (const key of keys) bytes += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  return { keys: keys.length, kib: bytes / 1024 };
}

console.log(`# node bench/soak.bench.mjs --requests ${TOTAL} --concurrency ${CONCURRENCY}`);
console.log(
  `# ${cpus().length} cores, node ${process.version}, tiny model, 1 worker (PARALLEL=4), REPLY_TTL_MS=${TTL_MS}, JOB_RETENTION_SECONDS=5`,
);
const [api, worker] = await Promise.all([
  launch('dist/apps/api/src/main.js', /listening on/),
  launch('dist/apps/worker/src/main.js', /Worker ready/),
]);
/**
 * HTTP statuses of the replies so far, by status code.
 * @typedef {Record<number, number>} Statuses
 */
/** @type {{ label: string, done: number, api: string, worker: string, keys: number, kib: string, statuses: string }[]} */
const rows = [];
/**
 * @param {string} label
 * @param {number} done
 * @param {Statuses} statuses
 */
const sample = async (label, done, statuses) => {
  const held = await redisHeld();
  rows.push({
    label,
    done,
    api: rss(api.pid).toFixed(1),
    worker: rss(worker.pid).toFixed(1),
    keys: held.keys,
    kib: held.kib.toFixed(0),
    statuses: JSON.stringify(statuses),
  });
};

try {
  /** @type {Statuses} */
  const statuses = {};
  await sample('baseline', 0, statuses);
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  /** @param {number} i */
  const one = async (i) => {
    const stream = i % 3 === 0;
    const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'conveyor-tiny',
        messages: [{ role: 'user', content: `soak ${i}` }],
        max_tokens: 8,
        temperature: 0,
        stream,
      }),
    });
    await res.text();
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  };
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < TOTAL) {
        await one(next++);
        if (++done % Math.max(1, Math.floor(TOTAL / 6)) === 0) await sample('during', done, { ...statuses });
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await sample('end of load', done, { ...statuses });
  await new Promise((r) => setTimeout(r, TTL_MS + 2000));
  // BullMQ trims finished jobs by age when later jobs finish: a few trailing requests let it.
  for (let i = 0; i < 3; i++) await one(TOTAL + i);
  await new Promise((r) => setTimeout(r, 1000));
  await sample(`+${(TTL_MS + 3000) / 1000}s idle`, done + 3, { ...statuses });

  console.log(`\n${done} requests in ${seconds.toFixed(1)} s (${(done / seconds).toFixed(0)} req/s, 1/3 streamed)\n`);
  console.log('| sample | requests | API RSS MiB | worker RSS MiB | Redis keys | Redis KiB | statuses |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(`| ${r.label} | ${r.done} | ${r.api} | ${r.worker} | ${r.keys} | ${r.kib} | ${r.statuses} |`);
} finally {
  for (const p of [api, worker]) p.kill('SIGTERM');
  await Promise.all(
    [api, worker].map(
      /** @returns {Promise<void>} */
      (p) => new Promise((r) => (p.exitCode === null ? p.once('exit', () => r()) : r())),
    ),
  );
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
}
