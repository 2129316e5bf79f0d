#!/usr/bin/env node
// How long a reply stalls when the worker generating it is killed, two ways:
// - the takeover: from the SIGKILL to the moment another worker takes the job over and starts continuing the
//   reply (its attempt's start in the API replica's reply inbox, timed by Redis's own clock in the entry id).
//   BullMQ finds a job whose lock lapsed at the stalled check after the one that marked it, so without the
//   heartbeat takeover the wait is bounded by the lock plus two check intervals; with it, by the heartbeat's
//   lapse plus a watcher's pass.
// - what the client sees: from the last text it received before the kill to the first text the new attempt
//   generated (text of the dead attempt relayed after the kill is not new). The takeover plus the new attempt's
//   start: reading what was sent, and evaluating the prompt with that text on a worker that holds none of it.
//   Each run also checks the client's text: what the reply's events hold, the new attempt's going on from the
//   old one's, nothing repeated or left out.
// Each run kills at a different moment of its reply (0.2 s to 3 s into it, then again), so the kills land at
// different points of the heartbeat's cycle and with more or less text to take over. With --streams N, N other
// replies stream meanwhile (each worker runs N + 1 at once, so the one left can hold them all): the continued
// reply's prompt then goes in beside them, as on a busy deployment. On a Redis of its own. One file of more than
// 300 lines: both figures come from the same kills.
//   node bench/takeover.bench.mjs [--runs 20] [--streams 0] [--lock-ms N] [--stalled-ms N]   (defaults: the platform's own)
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { Children, freePort, stopChildrenOnSignal } from './lib/processes.mjs';
import { runHeader } from './lib/report.mjs';
import { pct, table } from './lib/stats.mjs';
/** @import { DistModules } from './lib/dist.mjs' */

const USAGE = 'usage: node bench/takeover.bench.mjs [--runs 20] [--streams 0] [--lock-ms N] [--stalled-ms N]';
const options = parseCli(USAGE, {
  runs: { type: 'string', default: '20' },
  streams: { type: 'string', default: '0' },
  'lock-ms': { type: 'string', default: '' },
  'stalled-ms': { type: 'string', default: '' },
});
const runs = positiveInt('runs', options.runs);
const streams = options.streams === '0' ? 0 : positiveInt('streams', options.streams);
const root = resolve(import.meta.dirname, '..');
const { readReplyHistory, replayReply, replyInboxKey } = /** @type {DistModules['libs/queue/src/index.js']} */ (
  await import(pathToFileURL(resolve(root, 'dist/libs/queue/src/index.js')).href)
);
const prefix = `bench-takeover-${randomBytes(4).toString('hex')}`;
const lockMs = Number(options['lock-ms'] || 30_000);
const stalledMs = Number(options['stalled-ms'] || 30_000);

const children = new Children(root);
stopChildrenOnSignal();
const redisUrl = await children.launchRedis();
const port = await freePort();
/** @type {Record<string, string>} */
const env = {
  REDIS_URL: redisUrl,
  REDIS_CLUSTER_NODES: '',
  REDIS_PREFIX: prefix,
  PORT: String(port),
  HOST: '127.0.0.1',
  MODEL: 'tiny',
  PARALLEL: String(streams + 1),
  UV_THREADPOOL_SIZE: '1',
  ...(options['lock-ms'] ? { WORKER_LOCK_MS: options['lock-ms'] } : {}),
  ...(options['stalled-ms'] ? { WORKER_STALLED_INTERVAL_MS: options['stalled-ms'] } : {}),
};

const queue = new Queue('jobs.conveyor-tiny', { connection: { url: redisUrl }, prefix });
/** @type {import('./lib/processes.mjs').Child[]} */
const workers = [];
const startWorker = async () =>
  workers.push(
    await children.launch('worker', process.execPath, ['dist/apps/worker/src/main.js'], env, /Worker ready/),
  );

const redis = new Redis(redisUrl);
/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A streamed reply of 4000 tokens.
 * @param {string} content
 * @param {AbortSignal} signal
 */
const chat = (content, signal) =>
  fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'conveyor-tiny',
      messages: [{ role: 'user', content }],
      max_tokens: 4000,
      ignore_eos: true,
      stream: true,
    }),
    signal,
  });

/**
 * When attempt 2 of a reply started, by the entry ids of the inbox its events went to (milliseconds of
 * Redis's clock). An inbox entry holds a field per reply: `[attempt, firstSeq, ...events]`, a start
 * being `[0, ...]` (libs/queue/src/reply-codec.ts).
 * @param {string} requestId
 * @returns {Promise<number | null>}
 */
async function takeoverAt(requestId) {
  for (const inbox of await redis.keys(replyInboxKey(prefix, '*'))) {
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

/**
 * The reply's events written so far (read while its client still follows it: the API trims what no one follows).
 * @param {string} requestId
 * @param {number} since when the request was sent (ms)
 */
async function replyEvents(requestId, since) {
  const events = [];
  for (const inbox of await redis.keys(replyInboxKey(prefix, '*')))
    events.push(...(await readReplyHistory(redis, prefix, inbox, requestId, since)).events);
  return events;
}

/**
 * A streamed reply read as it comes: each content chunk's text and when it arrived (Date.now()).
 * @param {ReadableStream<Uint8Array>} body
 */
function readStream(body) {
  /** @type {{ at: number, text: string }[]} */
  const chunks = [];
  const decoder = new TextDecoder();
  let buffer = '';
  const done = (async () => {
    const reader = body.getReader();
    for (;;) {
      const { value, done: ended } = await reader.read();
      if (ended) return;
      const at = Date.now();
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        if (!data || data === '[DONE]') continue;
        const json = JSON.parse(data);
        if (json.error) throw new Error(`stream error: ${JSON.stringify(json.error)}`);
        const text = json.choices?.[0]?.delta?.content;
        if (text) chunks.push({ at, text });
      }
    }
  })();
  done.catch(() => undefined);
  return { chunks, done, text: () => chunks.map((c) => c.text).join('') };
}

/**
 * What a run's client read is sound: the new attempt says it continues the reply, its token count goes on
 * from the old attempt's, and the client's text is what the reply's events hold, in order, once.
 * @param {Awaited<ReturnType<typeof replyEvents>>} events
 * @param {string} clientText
 * @returns {string | null} what is wrong, if anything
 */
function checkText(events, clientText) {
  const start = events.find((e) => e.type === 'start' && e.attempt === 2);
  if (!start || start.type !== 'start' || !start.resumed) return 'attempt 2 did not continue the reply';
  const before = replayReply(events.filter((e) => e.attempt === 1));
  const after = events.find((e) => e.type === 'delta' && e.attempt === 2);
  if (!after || after.type !== 'delta') return 'attempt 2 wrote no text';
  if ((after.tokens ?? 0) <= before.tokens) return `attempt 2 counted from ${after.tokens} after ${before.tokens}`;
  const whole = replayReply(events).text;
  if (!whole.startsWith(before.text)) return "the reply does not begin with the dead attempt's text";
  if (whole.slice(0, clientText.length) !== clientText) return "the client's text is not the reply's";
  if (clientText.length <= before.text.length) return 'the client read no new text';
  return null;
}

try {
  await children.launch('api', process.execPath, ['dist/apps/api/src/main.js'], env, /listening on/);
  await startWorker();
  await startWorker();
  /** @type {number[]} */
  const takeovers = [];
  /** @type {number[]} */
  const stalls = [];
  /** @type {number[]} */
  const beyond = [];
  /** @type {number[]} */
  const carried = [];
  /** @type {string[]} */
  const problems = [];
  for (let run = 1; run <= runs; run++) {
    const controller = new AbortController();
    // The other replies, read to their end (or until the run is over) by clients of their own.
    const others = new AbortController();
    for (let i = 0; i < streams; i++)
      chat(`other ${i}`, others.signal)
        .then((r) => r.text())
        .catch(() => undefined);
    if (streams) await sleep(300);
    const sentAt = Date.now();
    const res = await chat('go', controller.signal);
    const requestId = /** @type {string} */ (res.headers.get('x-request-id'));
    const stream = readStream(/** @type {ReadableStream<Uint8Array>} */ (res.body));
    // Mid-reply: the job is running and has written some of its text.
    /** @type {import('bullmq').Job | undefined} */
    let job;
    for (let i = 0; i < 500 && !(job?.processedBy && (await job.getState()) === 'active'); i++) {
      await sleep(10);
      job = await queue.getJob(requestId);
    }
    await sleep(200 + ((run - 1) % 20) * 150);
    const pid = Number(job?.processedBy?.split(':').pop());
    const holder = workers.find((w) => w.proc.pid === pid);
    if (!holder) throw new Error('no worker holds the job');
    holder.stopped = true;
    holder.proc.kill('SIGKILL');
    const killedAt = Date.now();
    workers.splice(workers.indexOf(holder), 1);
    const lastBefore = stream.chunks.findLast((c) => c.at <= killedAt)?.at ?? sentAt;
    /** @type {number | null} */
    let resumedAt = null;
    while (resumedAt === null) {
      await sleep(50);
      resumedAt = await takeoverAt(requestId);
    }
    // The dead attempt's text, as the new attempt read it: the client's first chunk past it is new text.
    const oldText = replayReply((await replyEvents(requestId, sentAt)).filter((e) => e.attempt === 1)).text;
    /** @type {{ at: number, text: string } | undefined} */
    let firstNew;
    for (let waited = 0; !firstNew; waited += 10) {
      if (waited > 120_000) throw new Error(`run ${run}: no new text 120 s after the takeover`);
      let length = 0;
      firstNew = stream.chunks.find((c) => (length += c.text.length) > oldText.length);
      if (!firstNew) await sleep(10);
    }
    // A moment more of the new attempt's text, then the check against the reply's events, read while followed.
    await sleep(300);
    const clientText = stream.text();
    const problem = checkText(await replyEvents(requestId, sentAt), clientText);
    if (problem) problems.push(`run ${run}: ${problem}`);
    takeovers.push(resumedAt - killedAt);
    stalls.push(firstNew.at - lastBefore);
    beyond.push(firstNew.at - resumedAt);
    carried.push(oldText.length);
    console.error(
      `run ${run}: taken over ${((resumedAt - killedAt) / 1000).toFixed(1)} s after the kill; the client waited ` +
        `${((firstNew.at - lastBefore) / 1000).toFixed(1)} s for new text, ${((firstNew.at - resumedAt) / 1000).toFixed(1)} s ` +
        `of it after the takeover (${oldText.length} characters sent before)${problem ? `; ${problem}` : ''}`,
    );
    // The clients leave; the jobs are cancelled before the next run starts.
    controller.abort();
    others.abort();
    await startWorker();
    for (let i = 0; i < 500 && (await queue.getActiveCount()) > 0; i++) await sleep(20);
  }
  /** @param {number[]} values */
  const seconds = (values) =>
    [pct(values, 50), pct(values, 95), Math.max(...values)].map((ms) => `${(ms / 1000).toFixed(1)} s`);
  for (const line of runHeader('bench/takeover.bench.mjs')) console.log(line);
  console.log(
    table(
      [
        'lock',
        'stalled check',
        'other streams',
        'runs',
        'p50',
        'p95',
        'max',
        'bound without the heartbeat takeover (lock + 2 checks)',
      ],
      [
        [
          `${lockMs} ms`,
          `${stalledMs} ms`,
          String(streams),
          String(runs),
          ...seconds(takeovers),
          `${((lockMs + 2 * stalledMs) / 1000).toFixed(1)} s`,
        ],
      ],
    ),
  );
  console.log(
    table(
      ['the client, from its last text before the kill to the first new text', 'runs', 'p50', 'p95', 'max'],
      [
        ['stall', String(runs), ...seconds(stalls)],
        ['of which after the takeover', String(runs), ...seconds(beyond)],
      ],
    ),
  );
  console.log(
    `text sent before the kill: ${Math.min(...carried)}–${Math.max(...carried)} characters; ` +
      `text checks: ${problems.length ? `${problems.length} failed` : `all ${runs} sound`}`,
  );
  for (const p of problems) console.log(p);
  if (problems.length) process.exitCode = 1;
} finally {
  redis.disconnect();
  await queue.close();
  await children.stopAll();
}
