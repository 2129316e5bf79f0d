#!/usr/bin/env node
// Queue time by service tier under saturation: one worker (engine: simulated, no model) whose sequences are
// always busy, a steady crowd of `default` requests keeping its queue full, and a few `priority` and `flex`
// requests arriving beside them. Each request is streamed, and its queue time is the time to its first
// chunk, which the API sends as a worker starts the job (before its first token). Prints p50/p95 per tier,
// and how many flex requests were refused (429) for a deep queue.
//   node bench/service-tiers.bench.mjs [--seconds 20] [--crowd 24] [--parallel 4] [--flex-depth 500]
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { HttpClient } from './lib/http.mjs';
import { Children, stopChildrenOnSignal } from './lib/processes.mjs';
import { assertBuilt, runHeader } from './lib/report.mjs';
import { now, pct, sleep, table } from './lib/stats.mjs';

const USAGE = 'usage: node bench/service-tiers.bench.mjs [--seconds 20] [--crowd 24] [--parallel 4] [--flex-depth 500]';
const options = parseCli(USAGE, {
  seconds: { type: 'string', default: '20' },
  crowd: { type: 'string', default: '24' },
  parallel: { type: 'string', default: '4' },
  'flex-depth': { type: 'string', default: '500' },
});
const SECONDS = positiveInt('seconds', options.seconds);
/** `default` requests in flight at once: more than the worker's sequences, so its queue never empties. */
const CROWD = positiveInt('crowd', options.crowd);
const PARALLEL = positiveInt('parallel', options.parallel);
const FLEX_DEPTH = positiveInt('flex-depth', options['flex-depth']);
/** `priority` and `flex` requests in flight at once, each. */
const FEW = 2;
const TTFT_MS = 20;
const TPOT_MS = 10;
const TOKENS = 10;
const DEPLOYMENT = 'sim';
const KEY = `sk-bench-${randomBytes(8).toString('hex')}`;
const here = resolve(import.meta.dirname, '..');
assertBuilt(join(here, 'dist'));

const configFile = join(mkdtempSync(join(os.tmpdir(), 'conveyor-tiers-')), 'conveyor.yaml');
writeFileSync(
  configFile,
  stringify({
    deployments: [
      {
        id: DEPLOYMENT,
        engine: 'simulated',
        simulated: { ttftMs: TTFT_MS, tpotMs: TPOT_MS, outputTokens: TOKENS },
        parallel: PARALLEL,
        contextSize: 4096,
      },
    ],
    apiKeys: [
      {
        name: 'bench',
        sha256: createHash('sha256').update(KEY).digest('hex'),
        tiers: ['auto', 'default', 'flex', 'priority'],
      },
    ],
  }),
);

/** @typedef {{ queued: number[], replies: number[], refused: number }} TierFigures */

/**
 * One streamed request at `tier`; records its queue time and whole time, or a refusal.
 * @param {HttpClient} http @param {string} url @param {string} tier @param {TierFigures} into
 */
async function one(http, url, tier, into) {
  const body = {
    model: DEPLOYMENT,
    messages: [{ role: 'user', content: 'Count to ten.' }],
    max_tokens: TOKENS,
    stream: true,
    service_tier: tier,
  };
  const sent = now();
  let first = 0;
  try {
    await http.call(`${url}/v1/chat/completions`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${KEY}` },
      onChunk: () => {
        first ||= now();
      },
    });
  } catch (err) {
    if (/\b429\b/.test(String(err))) {
      into.refused++;
      await sleep(50);
      return;
    }
    throw err;
  }
  // The first chunk is sent as the worker starts the job, before the engine's first token.
  into.queued.push(first - sent);
  into.replies.push(now() - sent);
}

stopChildrenOnSignal();
const children = new Children(here);
const prefix = `bench-tiers-${randomBytes(4).toString('hex')}`;
const http = new HttpClient();
/** @type {Record<string, TierFigures>} */
const figures = {
  priority: { queued: [], replies: [], refused: 0 },
  default: { queued: [], replies: [], refused: 0 },
  flex: { queued: [], replies: [], refused: 0 },
};
try {
  const redisUrl = await children.launchRedis();
  const url = await children.launchPlatform({
    redisUrl,
    prefix,
    configFile,
    env: { FLEX_QUEUE_DEPTH: String(FLEX_DEPTH) },
  });
  const until = now() + SECONDS * 1000;
  /** @param {string} tier */
  const lane = async (tier) => {
    while (now() < until) await one(http, url, tier, figures[tier]);
  };
  // The crowd first, so the queue is full before the few arrive.
  const crowd = Array.from({ length: CROWD }, () => lane('default'));
  await sleep(1000);
  const few = ['priority', 'flex'].flatMap((tier) => Array.from({ length: FEW }, () => lane(tier)));
  await children.watch(Promise.all([...crowd, ...few]));
} finally {
  await children.stopAll();
}

/** @param {number[]} values @param {number} p */
const ms = (values, p) => (values.length ? `${pct(values, p).toFixed(0)} ms` : '-');
console.log('# Queue time by service tier under saturation');
for (const line of runHeader('bench/service-tiers.bench.mjs')) console.log(line);
console.log(
  `one worker (engine: simulated, ${PARALLEL} sequences, ${TTFT_MS} ms to the first token, ${TPOT_MS} ms a token, ` +
    `${TOKENS} tokens a reply); ${CROWD} default requests in flight for ${SECONDS} s, ${FEW} priority and ${FEW} flex ` +
    `beside them from the second second; FLEX_QUEUE_DEPTH ${FLEX_DEPTH}; a redis-server of its own\n`,
);
console.log(
  table(
    ['tier', 'requests', 'refused (429)', 'queue p50', 'queue p95', 'reply p50', 'reply p95'],
    Object.entries(figures).map(([tier, f]) => [
      tier,
      String(f.queued.length),
      String(f.refused),
      ms(f.queued, 50),
      ms(f.queued, 95),
      ms(f.replies, 50),
      ms(f.replies, 95),
    ]),
  ),
);
