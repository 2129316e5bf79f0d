#!/usr/bin/env node
// Two models on one worker whose memory budget holds one of them (load: on-demand), on a Redis of its own:
// - cold start: a first request to a model no worker holds, from sending it to its reply, beside the same
//   request once the model is warm, and the load the worker logged;
// - alternating traffic: --requests requests taking turns between the two models, one at a time, each reply
//   awaited: loads and unloads counted from the worker's log, loads per minute, and every reply a 200;
// - memory: the MiB the worker's budget says each model takes, and the worker's RSS after the run.
// The models are the generated `bench` preset (46 MB file) served as two deployments, so each load reads and
// warms a model of its own.
//   node bench/models-on-demand.bench.mjs [--requests 20] [--context 2048] [--parallel 2]
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { Children, freePort, stopChildrenOnSignal } from './lib/processes.mjs';
import { runHeader } from './lib/report.mjs';

const USAGE = 'usage: node bench/models-on-demand.bench.mjs [--requests 20] [--context 2048] [--parallel 2]';
const options = parseCli(USAGE, {
  requests: { type: 'string', default: '20' },
  context: { type: 'string', default: '2048' },
  parallel: { type: 'string', default: '2' },
});
const requests = positiveInt('requests', options.requests);
const contextSize = positiveInt('context', options.context);
const parallel = positiveInt('parallel', options.parallel);
const root = resolve(import.meta.dirname, '..');
const engine = await import(pathToFileURL(resolve(root, 'dist/libs/engine/src/index.js')).href);
const configLib = await import(pathToFileURL(resolve(root, 'dist/libs/config/src/index.js')).href);

const dir = mkdtempSync(join(tmpdir(), 'conveyor-on-demand-'));
const configFile = join(dir, 'deployments.json');
const deployment = (/** @type {string} */ id) => ({ id, model: 'bench', load: 'on-demand', contextSize, parallel });
writeFileSync(configFile, JSON.stringify({ deployments: [deployment('model-a'), deployment('model-b')] }));
const config = configLib.loadConfig({ CONVEYOR_CONFIG: configFile });
/** @type {number} */
const modelMb = await engine.estimateModelMemoryMb(config.deployments[0], config.modelsDir, { log() {} });
// Room for one model and half of another: every switch unloads the other.
const budgetMb = Math.floor(modelMb * 1.5);

const children = new Children(root);
stopChildrenOnSignal();
const redisUrl = await children.launchRedis();
const port = await freePort();
const env = {
  REDIS_URL: redisUrl,
  REDIS_CLUSTER_NODES: '',
  REDIS_PREFIX: `bench-on-demand-${randomBytes(4).toString('hex')}`,
  CONVEYOR_CONFIG: configFile,
  PORT: String(port),
  HOST: '127.0.0.1',
  UV_THREADPOOL_SIZE: '1',
  WORKER_MEMORY_BUDGET_MB: String(budgetMb),
  LOG_FORMAT: 'text',
};
await children.launch('api', process.execPath, ['dist/apps/api/src/main.js'], env, /listening on/i);
const worker = await children.launch('worker', process.execPath, ['dist/apps/worker/src/main.js'], env, /Worker ready/);

/** @param {string} model @returns {Promise<number>} milliseconds to the reply */
async function ask(model) {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello.' }], max_tokens: 4, temperature: 0 }),
  });
  await res.text();
  if (res.status !== 200) throw new Error(`${model}: ${res.status}`);
  return performance.now() - started;
}
/** @param {RegExp} pattern */
const count = (pattern) => worker.output.match(new RegExp(pattern, 'g'))?.length ?? 0;
const rssMb = () => {
  const status = readFileSync(`/proc/${worker.proc.pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
};

try {
  const idleRss = rssMb();
  const cold = await ask('model-a');
  const warm = await ask('model-a');
  const loadMs = Number(/Loaded \\?"model-a\\?" on demand in (\d+) ms/.exec(worker.output)?.[1]);
  const started = performance.now();
  const times = [];
  for (let i = 0; i < requests; i++) times.push(await ask(i % 2 ? 'model-a' : 'model-b'));
  const minutes = (performance.now() - started) / 60_000;
  const loads = count(/Loaded \\?"model-[ab]\\?" on demand/) - 1;
  const unloads = count(/Unloaded \\?"model-[ab]\\?"/);
  times.sort((a, b) => a - b);
  console.log(
    [
      '# Models on demand',
      '',
      ...runHeader('bench/models-on-demand.bench.mjs'),
      '',
      `two deployments of the \`bench\` model (${contextSize} tokens × ${parallel} sequences), load: on-demand; worker budget ${budgetMb} MiB, each model ${modelMb} MiB as estimated`,
      '',
      '| | figure |',
      '| --- | --- |',
      `| cold start: first request to a model no worker holds | ${cold.toFixed(0)} ms (the load itself ${loadMs} ms) |`,
      `| the same request, warm | ${warm.toFixed(0)} ms |`,
      `| alternating: ${requests} requests, one at a time | ${(minutes * 60).toFixed(1)} s, all 200 |`,
      `| loads, unloads while alternating | ${loads}, ${unloads} (${(loads / minutes).toFixed(0)} loads per minute) |`,
      `| reply time while alternating, median / worst | ${times[Math.floor(times.length / 2)]?.toFixed(0)} / ${times.at(-1)?.toFixed(0)} ms |`,
      `| worker RSS: idle before any load, after the run (one model held) | ${idleRss} MiB, ${rssMb()} MiB |`,
    ].join('\n'),
  );
} finally {
  await children.stopAll();
}
