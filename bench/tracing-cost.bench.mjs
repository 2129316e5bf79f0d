#!/usr/bin/env node
// What tracing costs: the same streamed chat load through the platform with tracing off, then on (its
// spans exported over OTLP/HTTP to a receiver in this process, which counts and drops them), side by
// side: tokens per second, and the API's and the worker's CPU seconds per 1,000 tokens (their own
// process CPU counters on /metrics, before and after the load).
//   node bench/tracing-cost.bench.mjs [--requests 400] [--tokens 64]
//
// The worker runs the simulated engine (no model), so what is measured is the platform's own cost:
// tracing's share of it is as large as it can be. With a real model the engine's time dwarfs both.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { HttpClient } from './lib/http.mjs';
import { Children, freePort, stopChildrenOnSignal } from './lib/processes.mjs';
import { assertBuilt, runHeader } from './lib/report.mjs';
import { table } from './lib/stats.mjs';

const USAGE = 'usage: node bench/tracing-cost.bench.mjs [--requests 400] [--tokens 64]';
const options = parseCli(USAGE, {
  requests: { type: 'string', default: '400' },
  tokens: { type: 'string', default: '64' },
});
const REQUESTS = positiveInt('requests', options.requests);
const TOKENS = positiveInt('tokens', options.tokens);
/** Requests in flight at once, and sequences of the worker. */
const PARALLEL = 8;
const DEPLOYMENT = 'sim';
const root = resolve(import.meta.dirname, '..');
assertBuilt(join(root, 'dist'));

const configFile = join(mkdtempSync(join(os.tmpdir(), 'conveyor-tracing-cost-')), 'conveyor.yaml');
writeFileSync(
  configFile,
  stringify({
    deployments: [
      {
        id: DEPLOYMENT,
        engine: 'simulated',
        simulated: { ttftMs: 2, tpotMs: 1, outputTokens: TOKENS },
        parallel: PARALLEL,
        contextSize: 4096,
      },
    ],
  }),
);

/** An OTLP/HTTP receiver: takes every export, counts its requests and bytes, keeps nothing. */
async function receiver() {
  const counted = { exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (chunk) => (counted.bytes += chunk.length));
    req.on('end', () => {
      counted.exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  const port = await freePort();
  await new Promise((ok) => server.listen(port, '127.0.0.1', () => ok(undefined)));
  return { url: `http://127.0.0.1:${port}`, counted, close: () => new Promise((ok) => server.close(ok)) };
}

/** A process's CPU seconds from its /metrics (`<prefix>process_cpu_seconds_total`). @param {string} url @param {string} name */
async function cpuSeconds(url, name) {
  const text = await (await fetch(url)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? NaN);
}

/** One streamed request; resolves with its tokens once its stream has ended. @param {HttpClient} http @param {string} url @param {number} i */
async function one(http, url, i) {
  const body = {
    model: DEPLOYMENT,
    messages: [{ role: 'user', content: `Request ${i}: a few words.` }],
    max_tokens: TOKENS,
    stream: true,
    stream_options: { include_usage: true },
  };
  const text = await http.call(`${url}/v1/chat/completions`, { method: 'POST', body });
  const usage = text
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)))
    .find((c) => c.usage)?.usage;
  if (!usage) throw new Error(`no usage in the stream: ${text.slice(0, 300)}`);
  return usage.completion_tokens;
}

/** `n` requests, PARALLEL in flight; the tokens they got. @param {HttpClient} http @param {string} url @param {number} n */
async function load(http, url, n) {
  let next = 0;
  let tokens = 0;
  const lane = async () => {
    while (next < n) tokens += await one(http, url, next++);
  };
  await Promise.all(Array.from({ length: PARALLEL }, lane));
  return tokens;
}

/** @param {boolean} tracing */
async function measure(tracing) {
  const children = new Children(root);
  const http = new HttpClient();
  const otlp = tracing ? await receiver() : null;
  try {
    const redisUrl = await children.launchRedis();
    const workerMetricsPort = await freePort();
    const url = await children.launchPlatform({
      redisUrl,
      prefix: `bench-tracing-${randomBytes(4).toString('hex')}`,
      configFile,
      env: {
        WORKER_METRICS_PORT: String(workerMetricsPort),
        MAX_QUEUE_DEPTH: '100000',
        ...(otlp ? { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' } : {}),
      },
    });
    const apiMetrics = `${url}/metrics`;
    const workerMetrics = `http://127.0.0.1:${workerMetricsPort}/metrics`;
    await children.watch(load(http, url, PARALLEL * 4));
    const before = [
      await cpuSeconds(apiMetrics, 'conveyor_api_process_cpu_seconds_total'),
      await cpuSeconds(workerMetrics, 'conveyor_worker_process_cpu_seconds_total'),
    ];
    const start = performance.now();
    const tokens = await children.watch(load(http, url, REQUESTS));
    const seconds = (performance.now() - start) / 1000;
    const after = [
      await cpuSeconds(apiMetrics, 'conveyor_api_process_cpu_seconds_total'),
      await cpuSeconds(workerMetrics, 'conveyor_worker_process_cpu_seconds_total'),
    ];
    return {
      tracing: tracing ? 'on' : 'off',
      tokensPerSecond: tokens / seconds,
      apiCpuPer1k: ((after[0] - before[0]) / tokens) * 1000,
      workerCpuPer1k: ((after[1] - before[1]) / tokens) * 1000,
      exported: otlp ? `${otlp.counted.exports} exports, ${(otlp.counted.bytes / 1024).toFixed(0)} KiB` : 'none',
    };
  } finally {
    await children.stopAll();
    await otlp?.close();
  }
}

stopChildrenOnSignal();
console.log('# What tracing costs: the same load with tracing off and on');
for (const line of runHeader('bench/tracing-cost.bench.mjs')) console.log(line);
console.log(
  `${REQUESTS} streamed chat completions of ${TOKENS} tokens, ${PARALLEL} in flight; one API, one worker ` +
    `(engine: simulated, ${PARALLEL} sequences); a redis-server of its own per run\n`,
);
const rows = [];
for (const tracing of [false, true]) rows.push(await measure(tracing));
console.log(
  table(
    ['tracing', 'tokens/s', 'API CPU s / 1k tokens', 'worker CPU s / 1k tokens', 'spans exported'],
    rows.map((r) => [
      r.tracing,
      r.tokensPerSecond.toFixed(0),
      r.apiCpuPer1k.toFixed(3),
      r.workerCpuPer1k.toFixed(3),
      r.exported,
    ]),
  ),
);
