#!/usr/bin/env node
// Conveyor against llama.cpp's own server, on the same model, threads and machine, in one run.
//
// Builds llama-server from the llama.cpp source inside node-llama-cpp (cached; see
// scripts/llama-server-build.mjs) and starts it on loopback with -np PARALLEL; starts the Conveyor API
// and worker(s) from dist/, measured through the whole platform (HTTP -> BullMQ/Redis -> worker
// -> Redis stream -> API -> HTTP). The two take turns, round by round, and never generate at
// the same time. A round is k concurrent streamed chat completions (k = 1, 2, 4, 8), greedy,
// EOS ignored, so every reply is exactly --tokens tokens long.
// Prints aggregate tokens/s, TTFT p50/p99 and the ratio, and writes a table and a chart
// under bench/results/.
//
// Usage: node bench/vs-llama-server.mjs [--model bench|tiny|/path.gguf] [--threads N] [--workers N]
//        [--parallel N] [--tokens N] [--rounds N] [--dist DIR] [--out NAME] [--quick]
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lineChartSvg } from './lib/chart.mjs';
import { HttpClient } from './lib/http.mjs';
import { resolveBenchModel } from './lib/model.mjs';
import { assertBuilt, runHeader } from './lib/report.mjs';
import { startLlamaServer } from './lib/llama-server.mjs';
import { Children, freePort, stopChildrenOnSignal } from './lib/processes.mjs';
import { deleteKeys } from './lib/redis.mjs';
import { fmtMs, now, pct, sleep, table } from './lib/stats.mjs';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { ensureLlamaServer } from '../scripts/llama-server-build.mjs';
import { WORKER_THREADPOOL_SIZE } from './lib/threadpool.mjs';

/** @import { StreamResult } from './lib/http.mjs' */
/**
 * One server under test: `runOne` streams one reply from it.
 * @typedef {{ name: string, client: HttpClient, runOne: () => Promise<StreamResult> }} Side
 */
/**
 * A side's figures at one concurrency.
 * @typedef {{ tps: number, ttftP50: number, ttftP99: number, tokens: number }} Row
 */
/** @typedef {Record<number, Row>} RowsByConcurrency */
/** @import { Model } from './lib/model.mjs' */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MODELS_DIR = resolve(ROOT, 'models');
const RESULTS_DIR = resolve(ROOT, 'bench/results');
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const PROMPT = 'Write a long story about a lighthouse keeper and a storm.';
const CONCURRENCIES = [1, 2, 4, 8];

const USAGE =
  'Usage: node bench/vs-llama-server.mjs [--model bench|tiny|/path.gguf] [--threads N] [--workers N] [--parallel N] ' +
  '[--context-size N] [--tokens N] [--rounds N] [--dist DIR] [--out NAME] [--quick]';
const opts = parseCli(USAGE, {
  model: { type: 'string', default: 'bench' },
  threads: { type: 'string', default: '1' },
  workers: { type: 'string', default: '1' },
  parallel: { type: 'string', default: '8' },
  'context-size': { type: 'string', default: '1024' },
  tokens: { type: 'string', default: '128' },
  rounds: { type: 'string', default: '3' },
  dist: { type: 'string', default: resolve(ROOT, 'dist') },
  out: { type: 'string', default: 'vs-llama-server' },
  quick: { type: 'boolean', default: false },
});
const THREADS = positiveInt('--threads', opts.threads);
const WORKERS = positiveInt('--workers', opts.workers);
const PARALLEL = positiveInt('--parallel', opts.parallel);
const CONTEXT_SIZE = positiveInt('--context-size', opts['context-size']);
const TOKENS = positiveInt('--tokens', opts.tokens);
const ROUNDS = opts.quick ? 1 : positiveInt('--rounds', opts.rounds);
const DIST = resolve(opts.dist);
if (!/^[\w.-]+$/.test(opts.out)) {
  console.error(`--out must be a plain file name (got "${opts.out}")`);
  process.exit(2);
}
// Conveyor's workers share the threads and sequences llama-server gets, so both use the same CPU.
if (THREADS % WORKERS !== 0) {
  console.error(
    `--threads (${THREADS}) must be a multiple of --workers (${WORKERS}), so both sides use the same threads`,
  );
  process.exit(2);
}
const WORKER_THREADS = THREADS / WORKERS;
const WORKER_PARALLEL = Math.max(1, Math.ceil(PARALLEL / WORKERS));

/** A pause between the two sides' rounds, so one side's threads have gone idle before the other starts. */
const SETTLE_MS = 300;

/**
 * Both servers stay up, idle but for the side being measured: for each concurrency k, the two take
 * turns, round by round, each round k concurrent streams. Taking turns spreads any drift of the
 * machine's speed over both sides alike, where one side after the other would not.
 * @param {Side[]} sides
 * @returns {Promise<Record<string, RowsByConcurrency>>}
 */
async function measureInTurns(sides) {
  for (const side of sides) {
    await Promise.all(Array.from({ length: PARALLEL }, side.runOne));
    await sleep(SETTLE_MS);
  }
  /** @type {Record<string, RowsByConcurrency>} */
  const rows = Object.fromEntries(sides.map((side) => [side.name, {}]));
  for (const k of CONCURRENCIES) {
    const acc = sides.map(() => ({
      tokens: 0,
      wall: 0,
      /** @type {number[]} */
      ttfts: [],
      /** @type {Record<string, number>} */
      finish: {},
      /** @type {Set<number>} */
      promptTokens: new Set(),
    }));
    for (let r = 0; r < ROUNDS; r++) {
      for (const [i, side] of sides.entries()) {
        const t0 = now();
        const results = await Promise.all(Array.from({ length: k }, side.runOne));
        acc[i].wall += now() - t0;
        for (const x of results) {
          acc[i].tokens += x.tokens;
          acc[i].ttfts.push(x.ttft);
          acc[i].promptTokens.add(x.promptTokens);
          const reason = String(x.finishReason);
          acc[i].finish[reason] = (acc[i].finish[reason] ?? 0) + 1;
        }
        await sleep(SETTLE_MS);
      }
    }
    for (const [i, side] of sides.entries()) {
      const { tokens, wall, ttfts, finish, promptTokens } = acc[i];
      const row = { tps: (tokens / wall) * 1000, ttftP50: pct(ttfts, 50), ttftP99: pct(ttfts, 99), tokens };
      rows[side.name][k] = row;
      const finishText = Object.entries(finish)
        .map(([reason, n]) => `${reason}:${n}`)
        .join(' ');
      console.log(
        `  ${side.name.padEnd(12)} k=${k}: ${tokens} tokens in ${(wall / 1000).toFixed(2)} s = ${row.tps.toFixed(1)} tok/s; ` +
          `TTFT p50 ${fmtMs(row.ttftP50)}, p99 ${fmtMs(row.ttftP99)}; prompt ${[...promptTokens].join('/')} tokens; finish ${finishText}`,
      );
    }
  }
  return rows;
}

/** @param {string} model */
function sameBody(model) {
  return { model, messages: [{ role: 'user', content: PROMPT }], max_tokens: TOKENS, temperature: 0, ignore_eos: true };
}

/**
 * @param {Children} children
 * @param {string} binary
 * @param {string} modelPath
 * @returns {Promise<Side>}
 */
async function startLlama(children, binary, modelPath) {
  const { client, base } = await startLlamaServer(children, {
    binary,
    modelPath,
    threads: THREADS,
    sequences: PARALLEL,
    contextSize: CONTEXT_SIZE,
  });
  // Its prompt cache would skip the prompt of every repeated request; Conveyor evaluates it each time.
  const body = { ...sameBody('model'), cache_prompt: false };
  return { name: 'llama-server', client, runOne: () => client.streamChat(`${base}/v1/chat/completions`, body) };
}

/**
 * @param {Children} children
 * @param {string} model
 * @param {string} deploymentId
 * @param {string} prefix
 * @returns {Promise<Side>}
 */
async function startConveyor(children, model, deploymentId, prefix) {
  const client = new HttpClient();
  const port = await freePort();
  const env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    REDIS_URL,
    REDIS_PREFIX: prefix,
    MODEL: model,
    MODELS_DIR,
    PARALLEL: String(WORKER_PARALLEL),
    THREADS: String(WORKER_THREADS),
    CONTEXT_SIZE: String(CONTEXT_SIZE),
    // As `npm run start:worker` and the worker images set it.
    UV_THREADPOOL_SIZE: WORKER_THREADPOOL_SIZE,
  };
  const started = await Promise.all([
    children.launch('api', process.execPath, [resolve(DIST, 'apps/api/src/main.js')], env, /listening on/),
    ...Array.from({ length: WORKERS }, (_, i) =>
      children.launch(
        `worker${i + 1}`,
        process.execPath,
        [resolve(DIST, 'apps/worker/src/main.js')],
        env,
        /Worker ready/,
      ),
    ),
  ]);
  console.log(
    `  Conveyor API + ${WORKERS} worker(s) × (THREADS=${WORKER_THREADS}, PARALLEL=${WORKER_PARALLEL}), REDIS_PREFIX=${prefix}: ` +
      `ready in ${started.map((c) => `${c.name} ${fmtMs(c.readyMs)}`).join(', ')}`,
  );
  const url = `http://127.0.0.1:${port}/v1/chat/completions`;
  return { name: 'Conveyor', client, runOne: () => client.streamChat(url, sameBody(deploymentId)) };
}

/**
 * @param {string} binary
 * @param {Model} model
 */
async function measureBoth(binary, model) {
  const children = new Children(ROOT);
  const prefix = `bench-${randomBytes(6).toString('hex')}`;
  currentPrefix = prefix;
  /** @type {Side[]} */
  const sides = [];
  console.log('\n== Starting both servers');
  try {
    sides.push(await startLlama(children, binary, model.path));
    sides.push(await startConveyor(children, model.model, model.deploymentId, prefix));
    console.log(`\n== Measuring, ${ROUNDS} round(s) per side and concurrency, taking turns`);
    const rows = await children.watch(measureInTurns(sides));
    const problems = children.problems();
    if (problems.length)
      console.log(`  !! ${problems.length} warning/error line(s), e.g.:\n     ${problems.slice(0, 5).join('\n     ')}`);
    return { llama: rows['llama-server'], conveyor: rows.Conveyor };
  } finally {
    for (const side of sides) side.client.destroy();
    await children.stopAll();
    await deleteKeys(REDIS_URL, prefix).catch(
      /** @param {unknown} err */
      (err) =>
        console.error(`  could not delete ${prefix}:* keys: ${err instanceof Error ? err.message : String(err)}`),
    );
    currentPrefix = null;
  }
}

/**
 * Prints the results and writes them as Markdown, JSON and an SVG chart under bench/results/.
 * @param {string[]} header
 * @param {RowsByConcurrency} llama
 * @param {RowsByConcurrency} conveyor
 */
function report(header, llama, conveyor) {
  const rows = CONCURRENCIES.map((k) => [
    String(k),
    llama[k].tps.toFixed(1),
    conveyor[k].tps.toFixed(1),
    (conveyor[k].tps / llama[k].tps).toFixed(2) + '×',
    `${llama[k].ttftP50.toFixed(1)} / ${llama[k].ttftP99.toFixed(1)}`,
    `${conveyor[k].ttftP50.toFixed(1)} / ${conveyor[k].ttftP99.toFixed(1)}`,
  ]);
  const text = table(
    [
      'streams',
      'llama-server tok/s',
      'Conveyor tok/s',
      'Conveyor / llama-server',
      'llama-server TTFT p50 / p99 ms',
      'Conveyor TTFT p50 / p99 ms',
    ],
    rows,
  );
  console.log(`\n== Results\n\n${text}\n`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const md = `# Conveyor vs llama-server\n\n${header.map((l) => `- ${l}`).join('\n')}\n\n${text}\n\n![tokens/s against concurrent streams](${opts.out}.svg)\n`;
  writeFileSync(resolve(RESULTS_DIR, `${opts.out}.md`), md);
  writeFileSync(
    resolve(RESULTS_DIR, `${opts.out}.json`),
    JSON.stringify({ header, llamaServer: llama, conveyor }, null, 2) + '\n',
  );
  const svg = lineChartSvg({
    title: 'Aggregate tokens/s, Conveyor beside llama-server',
    subtitle: `${opts.model} model, ${THREADS} thread(s), ${TOKENS}-token greedy replies, ${os.cpus().length}-core ${os.cpus()[0]?.model?.trim() ?? ''}`,
    xLabel: 'concurrent streams',
    yLabel: 'tokens/s (all streams together)',
    categories: CONCURRENCIES,
    series: [
      { name: 'llama-server', color: '#888', values: CONCURRENCIES.map((k) => llama[k].tps) },
      { name: 'Conveyor (through the queue)', color: '#1f6feb', values: CONCURRENCIES.map((k) => conveyor[k].tps) },
    ],
  });
  writeFileSync(resolve(RESULTS_DIR, `${opts.out}.svg`), svg);
  console.log(
    `wrote ${['md', 'json', 'svg'].map((e) => relative(process.cwd(), resolve(RESULTS_DIR, `${opts.out}.${e}`))).join(', ')}`,
  );
}

async function main() {
  assertBuilt(DIST);
  const model = await resolveBenchModel(DIST, opts.model, MODELS_DIR);
  const binary = ensureLlamaServer({ log: (line) => console.log(line) });
  const header = [
    ...runHeader('bench/vs-llama-server.mjs'),
    `model: ${opts.model} (${relative(ROOT, model.path)}); ${TOKENS}-token replies, temperature 0, ignore_eos; ${ROUNDS} round(s) per row after a warm-up`,
    `llama-server: ${relative(os.homedir(), binary)} with -t ${THREADS} -np ${PARALLEL} -c ${CONTEXT_SIZE * PARALLEL}`,
    `Conveyor: API + ${WORKERS} worker process(es), each THREADS=${WORKER_THREADS} PARALLEL=${WORKER_PARALLEL} CONTEXT_SIZE=${CONTEXT_SIZE} UV_THREADPOOL_SIZE=${WORKER_THREADPOOL_SIZE}; Redis ${REDIS_URL}`,
  ];
  console.log(`# Conveyor vs llama-server\n${header.join('\n')}`);
  const { llama, conveyor } = await measureBoth(binary, model);
  report(header, llama, conveyor);
}

/** @type {string | null} */
let currentPrefix = null;
stopChildrenOnSignal(async () => currentPrefix && deleteKeys(REDIS_URL, currentPrefix));
try {
  await main();
  process.exit(0);
} catch (err) {
  console.error(`\nbench failed: ${(err instanceof Error ? err.stack : undefined) ?? err}`);
  process.exit(1);
}
