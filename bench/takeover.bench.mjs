#!/usr/bin/env node
// How long a reply stalls when the worker generating it is killed: from the SIGKILL to the moment another
// worker takes the job over and starts continuing the reply (its attempt's start in the API replica's
// reply inbox, timed by Redis's own clock in the entry id). BullMQ finds a job whose lock lapsed at the stalled check
// after the one that marked it, so without the heartbeat takeover the wait is bounded by the lock plus two check
// intervals; with it, by the heartbeat's lapse plus a watcher's pass. Each run kills at a different moment of its
// reply (0.2 s to 3 s into it, then again), so the kills land at different points of the heartbeat's cycle.
//   node bench/takeover.bench.mjs [--runs 5] [--lock-ms N] [--stalled-ms N]   (defaults: the platform's own)
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { Children, freePort } from './lib/processes.mjs';
import { deleteKeys } from './lib/redis.mjs';
import { runHeader } from './lib/report.mjs';
import { pct, table } from './lib/stats.mjs';

const USAGE = 'usage: node bench/takeover.bench.mjs [--runs 5] [--lock-ms N] [--stalled-ms N]';
const options = parseCli(USAGE, {
  runs: { type: 'string', default: '5' },
  'lock-ms': { type: 'string', default: '' },
  'stalled-ms': { type: 'string', default: '' },
});
const runs = positiveInt('runs', options.runs);
const root = resolve(import.meta.dirname, '..');
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `bench-takeover-${randomBytes(4).toString('hex')}`;
const port = await freePort();
/** @type {Record<string, string>} */
const env = {
  REDIS_URL: redisUrl,
  REDIS_PREFIX: prefix,
  PORT: String(port),
  HOST: '127.0.0.1',
  MODEL: 'tiny',
  PARALLEL: '1',
  UV_THREADPOOL_SIZE: '1',
  ...(options['lock-ms'] ? { WORKER_LOCK_MS: options['lock-ms'] } : {}),
  ...(options['stalled-ms'] ? { WORKER_STALLED_INTERVAL_MS: options['stalled-ms'] } : {}),
};
const lockMs = Number(options['lock-ms'] || 30_000);
const stalledMs = Number(options['stalled-ms'] || 30_000);

const children = new Children(root);
const queue = new Queue('jobs.conveyor-tiny', { connection: { url: redisUrl }, prefix });
/** @type {import('./lib/processes.mjs').Child[]} */
const workers = [];
const startWorker = async () =>
  workers.push(
    await children.launch('worker', process.execPath, ['dist/apps/worker/src/main.js'], env, /Worker ready/),
  );

const redis = new Redis(redisUrl);

/**
 * When attempt 2 of a reply started, by the entry ids of the inbox its events went to (milliseconds of
 * Redis's clock). An inbox entry holds a field per reply: `[attempt, firstSeq, ...events]`, a start
 * being `[0, ...]` (libs/queue/src/reply-codec.ts).
 * @param {string} requestId
 * @returns {Promise<number | null>}
 */
async function takeoverAt(requestId) {
  for (const inbox of await redis.keys(`${prefix}:inbox:*`)) {
    for (const [entryId, fields] of await redis.xrange(inbox, '-', '+')) {
      for (let i = 0; i + 1 < fields.length; i += 2) {
        if (fields[i] !== requestId) continue;
        const [attempt, , ...events] = JSON.parse(/** @type {string} */ (fields[i + 1]));
        if (attempt >= 2 && events.some((/** @type {unknown[]} */ e) => e[0] === 0))
          return Number(entryId.split('-')[0]);
      }
    }
  }
  return null;
}

try {
  await children.launch('api', process.execPath, ['dist/apps/api/src/main.js'], env, /listening on/);
  await startWorker();
  await startWorker();
  /** @type {number[]} */
  const stalls = [];
  for (let run = 1; run <= runs; run++) {
    const controller = new AbortController();
    const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'conveyor-tiny',
        messages: [{ role: 'user', content: 'go' }],
        max_tokens: 4000,
        ignore_eos: true,
        stream: true,
      }),
      signal: controller.signal,
    });
    const requestId = /** @type {string} */ (res.headers.get('x-request-id'));
    // Mid-reply: the job is running and has written some of its text.
    /** @type {import('bullmq').Job | undefined} */
    let job;
    for (let i = 0; i < 500 && !(job?.processedBy && (await job.getState()) === 'active'); i++) {
      await new Promise((r) => setTimeout(r, 10));
      job = await queue.getJob(requestId);
    }
    await new Promise((r) => setTimeout(r, 200 + ((run - 1) % 20) * 150));
    const pid = Number(job?.processedBy?.split(':').pop());
    const holder = workers.find((w) => w.proc.pid === pid);
    if (!holder) throw new Error('no worker holds the job');
    holder.proc.kill('SIGKILL');
    const killedAt = Date.now();
    workers.splice(workers.indexOf(holder), 1);
    /** @type {number | null} */
    let resumedAt = null;
    while (resumedAt === null) {
      await new Promise((r) => setTimeout(r, 50));
      resumedAt = await takeoverAt(requestId);
    }
    stalls.push(resumedAt - killedAt);
    console.error(`run ${run}: taken over ${((resumedAt - killedAt) / 1000).toFixed(1)} s after the kill`);
    // The client leaves; the job is cancelled before the next run starts.
    controller.abort();
    await startWorker();
    for (let i = 0; i < 500 && (await queue.getActiveCount()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
  }
  for (const line of runHeader('bench/takeover.bench.mjs')) console.log(line);
  console.log(
    table(
      ['lock', 'stalled check', 'runs', 'p50', 'p95', 'max', 'bound without the heartbeat takeover (lock + 2 checks)'],
      [
        [
          `${lockMs} ms`,
          `${stalledMs} ms`,
          String(runs),
          `${(pct(stalls, 50) / 1000).toFixed(1)} s`,
          `${(pct(stalls, 95) / 1000).toFixed(1)} s`,
          `${(Math.max(...stalls) / 1000).toFixed(1)} s`,
          `${((lockMs + 2 * stalledMs) / 1000).toFixed(1)} s`,
        ],
      ],
    ),
  );
} finally {
  redis.disconnect();
  await queue.close();
  await children.stopAll();
  await deleteKeys(redisUrl, prefix);
}
