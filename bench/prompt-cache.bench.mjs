#!/usr/bin/env node
// Prompt-heavy workloads on Conveyor beside llama.cpp's own server, on the same model, thread count,
// sequences and machine, in one run. It measures the worker's prompt cache (a request reuses the
// longest prompt prefix a free sequence still holds) and its chunked prefill (prompts go in 256 tokens
// at a time, the running replies' next tokens between the chunks) against llama-server with its
// prompt cache on, as it ships.
//
// Workloads; in each round, each side runs each workload in turn (never both at once), and the side
// that goes first alternates from round to round:
//   1. shared-prefix batch: N requests sharing one ~1.1k-token system prompt, 4 at a time, 8 tokens
//      each: wall time and TTFT p50. On Conveyor also through the Batches API (upload to completed);
//   2. multi-turn conversation: 6 turns, the history growing to ~1.5k tokens: each turn's TTFT;
//   3. long prompt during streams: 3 streams decoding, then one ~1.5k-token prompt: the longest gap
//      between two content chunks of the streams while it is taken in (the stall), and its TTFT;
//   4. decode only: 4 concurrent 128-token streams, short prompt: aggregate tokens/s.
// Every prompt starts with a nonce of its own, so no side finds a warm cache from an earlier run.
// --scale adds the shared-prefix batch (chat and Batches API) on Conveyor with 1 worker, then 2.
// Prints the figures and the ratios, and writes a table, JSON and an SVG chart under bench/results/.
//
// Usage: node bench/prompt-cache.bench.mjs [--model bench|tiny|/path.gguf] [--workers N] [--rounds N]
//        [--context-size N] [--batch-inflight N] [--prompt-cache exact|full|off] [--scale] [--dist DIR]
//        [--out NAME] [--quick]
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { barChartSvg } from './lib/chart.mjs';
import { resolveBenchModel } from './lib/model.mjs';
import { assertBuilt, loadAverage, runHeader } from './lib/report.mjs';
import { startLlamaServer } from './lib/llama-server.mjs';
import { Children, stopChildrenOnSignal } from './lib/processes.mjs';
import { pool } from './lib/pool.mjs';
import { runBatchFile } from './lib/batch-run.mjs';
import { startConveyor as launchConveyor } from './lib/conveyor.mjs';
import { deleteKeys } from './lib/redis.mjs';
import { median, now, sleep, table } from './lib/stats.mjs';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { ensureLlamaServer } from '../scripts/llama-server-build.mjs';
import { WORKER_THREADPOOL_SIZE } from './lib/threadpool.mjs';
import { seededWords } from './lib/words.mjs';

/** @import { HttpClient, StreamResult, StreamOptions } from './lib/http.mjs' */
/** @import { ReadyChild } from './lib/processes.mjs' */
/** @typedef {{ role: 'system' | 'user' | 'assistant', content: string }} Message */
/**
 * One server under test, reached over HTTP at `base`, its model named `model` in requests.
 * @typedef {{ name: 'llama-server' | 'Conveyor', client: HttpClient, base: string, model: string }} Side
 */
/**
 * What one run of the shared-prefix batch measured. `reused` is what the server says it took from its
 * cache (Conveyor's cached_tokens, llama-server's timings.cache_n); `evaluated` is llama-server's
 * timings.prompt_n (null where the server does not say).
 * @typedef {{ wall: number, ttftP50: number | null, requests: number, promptMin: number, promptMax: number,
 *             promptTotal: number, reused: number, cachedTokens: number | null, evaluated: number | null }} SharedRun
 */
/** @typedef {{ ttft: number, promptTokens: number, reused: number }} Turn */
/**
 * `normalGap`: the mean gap between content events before the long prompt arrived; `eventsDuring`: content
 * events of each running stream while it was taken in.
 * @typedef {{ stall: number, normalGap: number, eventsDuring: number[], longTtft: number, longPromptTokens: number, prefillTps: number,
 *             reused: number, streamTokens: number }} LongRun
 */
/** @typedef {{ tps: number, ttftP50: number, tokens: number, wall: number }} DecodeRun */
/**
 * A side's runs, one per round.
 * @typedef {{ shared: SharedRun[], batch: SharedRun[], turns: Turn[][], long: LongRun[], decode: DecodeRun[] }} Runs
 */
/** @typedef {{ workers: number, chat: SharedRun[], batch: SharedRun[] }} ScaleRuns */
/** @import { Model } from './lib/model.mjs' */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MODELS_DIR = resolve(ROOT, 'models');
const RESULTS_DIR = resolve(ROOT, 'bench/results');
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
/** Both sides: llama.cpp threads and sequences (per Conveyor worker). */
const THREADS = 1;
const SEQUENCES = 4;
const STORY = 'Write a long story about a lighthouse keeper and a storm.';
/** A pause between two runs, so one side's threads have gone idle before the other starts. */
const SETTLE_MS = 300;

const USAGE =
  'Usage: node bench/prompt-cache.bench.mjs [--model bench|tiny|/path.gguf] [--workers N] [--rounds N] ' +
  '[--context-size N] [--batch-inflight N] [--prompt-cache exact|full|off] [--scale] [--dist DIR] [--out NAME] [--quick]';
const opts = parseCli(USAGE, {
  'prompt-cache': { type: 'string' },
  model: { type: 'string', default: 'bench' },
  workers: { type: 'string', default: '1' },
  rounds: { type: 'string', default: '2' },
  'context-size': { type: 'string', default: '2048' },
  'batch-inflight': { type: 'string' },
  scale: { type: 'boolean', default: false },
  dist: { type: 'string', default: resolve(ROOT, 'dist') },
  out: { type: 'string', default: 'prompt-cache' },
  quick: { type: 'boolean', default: false },
});
const WORKERS = positiveInt('--workers', opts.workers);
const ROUNDS = opts.quick ? 1 : positiveInt('--rounds', opts.rounds);
const CONTEXT_SIZE = positiveInt('--context-size', opts['context-size']);
const BATCH_INFLIGHT =
  opts['batch-inflight'] === undefined ? null : positiveInt('--batch-inflight', opts['batch-inflight']);
const DIST = resolve(opts.dist);
/** Conveyor's PROMPT_CACHE, or null for the platform's default. */
const PROMPT_CACHE = opts['prompt-cache'] ?? null;
if (PROMPT_CACHE !== null && !['exact', 'full', 'off'].includes(PROMPT_CACHE)) {
  console.error(`--prompt-cache must be exact, full or off (got "${PROMPT_CACHE}")`);
  process.exit(2);
}
if (!/^[\w.-]+$/.test(opts.out)) {
  console.error(`--out must be a plain file name (got "${opts.out}")`);
  process.exit(2);
}
if (opts.scale && WORKERS !== 1) {
  console.error('--scale compares 1 and 2 workers by itself: leave --workers at 1');
  process.exit(2);
}

/** Sizes of the workloads: token targets are what the prompt text is calibrated to. */
const S = opts.quick
  ? {
      sharedRequests: 8,
      sharedConcurrency: 4,
      sharedPromptTokens: 600,
      sharedTokens: 8,
      turns: 3,
      turnSystemTokens: 300,
      turnUserTokens: 120,
      turnReplyTokens: 32,
      streams: 3,
      streamTokens: 160,
      streamLead: 20,
      longPromptTokens: 800,
      longTokens: 8,
      decodeStreams: 4,
      decodeTokens: 64,
      scaleRequests: 16,
      scaleConcurrency: 8,
    }
  : {
      sharedRequests: 16,
      sharedConcurrency: 4,
      sharedPromptTokens: 1100,
      sharedTokens: 8,
      turns: 6,
      turnSystemTokens: 450,
      turnUserTokens: 150,
      turnReplyTokens: 32,
      streams: 3,
      streamTokens: 400,
      streamLead: 40,
      longPromptTokens: 1500,
      longTokens: 8,
      decodeStreams: 4,
      decodeTokens: 128,
      scaleRequests: 32,
      scaleConcurrency: 8,
    };
const turnsTarget = S.turnSystemTokens + S.turns * S.turnUserTokens + (S.turns - 1) * S.turnReplyTokens;
if (CONTEXT_SIZE < Math.max(S.longPromptTokens, turnsTarget) + 128) {
  console.error(`--context-size ${CONTEXT_SIZE} is too small for prompts of ~${turnsTarget} tokens`);
  process.exit(2);
}

// ---- Prompt text -------------------------------------------------------------------------------

const WORDS = (
  'harbor lantern meadow copper velvet granite orchard silver thunder willow canyon ember falcon glacier ' +
  'hollow island juniper kettle lagoon marble nectar oyster pebble quarry ripple saddle timber umber ' +
  'valley wander yonder zephyr anchor basket candle drizzle engine feather garden hammer inkwell jacket ' +
  'kitchen ladder mirror needle ocean pepper quiet river shadow tunnel violet window yellow zigzag ' +
  'account balance contract delivery estimate forecast guarantee invoice ledger margin ' +
  'network operator payment quarterly receipt schedule transfer utility vendor warehouse'
).split(' ');
const RUN_TAG = randomBytes(3).toString('hex');
let nonceCount = 0;
/** A tag no earlier prompt started with: every prompt begins with one, so no cache is warm for it. */
const nonce = () => `Ticket ${RUN_TAG}-${String(++nonceCount).padStart(4, '0')}.`;

/**
 * `count` words of the bench's vocabulary, the same for the same seed.
 * @param {number} seed
 * @param {number} count
 */
const words = (seed, count) => seededWords(WORDS, seed, count);

/**
 * The longest `words(seed, n)` of at most `target` tokens, as the model's tokenizer counts them.
 * @param {(text: string) => Promise<number>} tokenize
 * @param {number} seed
 * @param {number} target
 */
async function textOf(tokenize, seed, target) {
  // A word is at least one token, so `target` words are enough.
  let lo = 1;
  let hi = target;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((await tokenize(words(seed, mid))) <= target) lo = mid;
    else hi = mid - 1;
  }
  return words(seed, lo);
}

/**
 * Tokens a prompt has beyond its calibrated text, as the bench model's chat template and tokenizer make
 * them, taken off the text's target: the nonce and template around the text (and in the shared-prefix
 * batch, the user item). The prompts' real sizes are printed from usage.prompt_tokens.
 */
const FRAME = { shared: 120, conversation: 50, question: 5, long: 40 };

// ---- Requests ----------------------------------------------------------------------------------

/**
 * One streamed, greedy chat completion that ignores EOS, so it runs to `maxTokens`.
 * @param {Side} side
 * @param {Message[]} messages
 * @param {number} maxTokens
 * @param {StreamOptions} [options]
 * @returns {Promise<StreamResult>}
 */
function chat(side, messages, maxTokens, options) {
  const body = { model: side.model, messages, max_tokens: maxTokens, temperature: 0, ignore_eos: true };
  return side.client.streamChat(`${side.base}/v1/chat/completions`, body, options);
}

/**
 * Prompt tokens the server says it took from its cache: llama-server's timings.cache_n, else usage's cached_tokens.
 * @param {StreamResult} r
 */
const reusedOf = (r) => r.timings?.cache_n ?? r.cachedTokens ?? 0;

/** The prompt texts, calibrated once with llama-server's tokenizer (the model's own). */
const texts = { shared: '', turnSystem: '', turnUsers: /** @type {string[]} */ ([]), long: '' };

/** @param {number} i */
const itemText = (i) => `Item ${i + 1}: ${words(1000 + i, 8)}. Answer in one line.`;

/**
 * @param {string} system
 * @param {number} i
 * @returns {Message[]}
 */
const sharedMessages = (system, i) => [
  { role: 'system', content: system },
  { role: 'user', content: itemText(i) },
];

/**
 * Workload 1 over chat: `count` requests, `concurrency` at a time, one system prompt shared by all.
 * @param {Side} side
 * @param {number} count
 * @param {number} concurrency
 * @returns {Promise<SharedRun>}
 */
async function sharedPrefixChat(side, count, concurrency) {
  const system = `${nonce()} ${texts.shared}`;
  const t0 = now();
  const results = await pool(count, concurrency, (i) => chat(side, sharedMessages(system, i), S.sharedTokens));
  const wall = now() - t0;
  const prompts = results.map((r) => r.promptTokens);
  const evaluated = results.every((r) => r.timings?.prompt_n !== undefined)
    ? results.reduce((sum, r) => sum + (r.timings?.prompt_n ?? 0), 0)
    : null;
  return {
    wall,
    ttftP50: median(results.map((r) => r.ttft)),
    requests: count,
    promptMin: Math.min(...prompts),
    promptMax: Math.max(...prompts),
    promptTotal: prompts.reduce((a, b) => a + b, 0),
    reused: results.reduce((sum, r) => sum + reusedOf(r), 0),
    cachedTokens: results.some((r) => r.cachedTokens !== null)
      ? results.reduce((sum, r) => sum + (r.cachedTokens ?? 0), 0)
      : null,
    evaluated,
  };
}

/**
 * Workload 1 through Conveyor's Batches API: the same requests as one JSONL file, uploaded, run as a
 * batch and polled until it completes. The wall time runs from the upload to `completed`.
 * @param {Side} side
 * @param {number} count
 * @returns {Promise<SharedRun>}
 */
async function sharedPrefixBatch(side, count) {
  const system = `${nonce()} ${texts.shared}`;
  const jsonl =
    Array.from({ length: count }, (_, i) =>
      JSON.stringify({
        custom_id: `item-${i + 1}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: {
          model: side.model,
          messages: sharedMessages(system, i),
          max_tokens: S.sharedTokens,
          temperature: 0,
          ignore_eos: true,
        },
      }),
    ).join('\n') + '\n';
  const { batch, wall, output } = await runBatchFile(side.base, jsonl, { fileName: 'prompt-cache.jsonl' });
  if (batch.request_counts?.failed)
    throw new Error(`batch ${batch.id} ended ${batch.status}: ${JSON.stringify(batch.request_counts)}`);
  const usages = output.map((l) => {
    const usage = l.response?.body.usage;
    if (!usage) throw new Error(`batch ${batch.id}: line ${l.custom_id} has no usage`);
    return usage;
  });
  const prompts = usages.map((u) => u.prompt_tokens);
  const cached = usages.reduce((sum, u) => sum + (u.prompt_tokens_details?.cached_tokens ?? 0), 0);
  return {
    wall,
    ttftP50: null,
    requests: count,
    promptMin: Math.min(...prompts),
    promptMax: Math.max(...prompts),
    promptTotal: prompts.reduce((a, b) => a + b, 0),
    reused: cached,
    cachedTokens: usages.some((u) => u.prompt_tokens_details) ? cached : null,
    evaluated: null,
  };
}

/**
 * Workload 2: one conversation, each turn's reply appended to the history before the next question.
 * @param {Side} side
 * @returns {Promise<Turn[]>}
 */
async function multiTurn(side) {
  /** @type {Message[]} */
  const messages = [{ role: 'system', content: `${nonce()} ${texts.turnSystem}` }];
  /** @type {Turn[]} */
  const turns = [];
  for (const question of texts.turnUsers) {
    messages.push({ role: 'user', content: question });
    const r = await chat(side, messages, S.turnReplyTokens);
    messages.push({ role: 'assistant', content: r.content });
    turns.push({ ttft: r.ttft, promptTokens: r.promptTokens, reused: reusedOf(r) });
  }
  return turns;
}

/**
 * Workload 3: `S.streams` streams decode; once each has sent `S.streamLead` content events, a long
 * prompt arrives. The stall is the longest gap between two content events of a stream that overlaps
 * the time from the long request's start to its first content.
 * @param {Side} side
 * @returns {Promise<LongRun>}
 */
async function longDuringStreams(side) {
  const tag = nonce();
  let led = 0;
  /** @type {() => void} */
  let allLed = () => {};
  const lead = new Promise((resolve) => (allLed = () => resolve(undefined)));
  const streams = Array.from({ length: S.streams }, (_, i) =>
    chat(side, [{ role: 'user', content: `${tag} Stream ${i + 1}: ${STORY}` }], S.streamTokens, {
      onContent: (n) => {
        if (n === S.streamLead && ++led === S.streams) allLed();
      },
    }),
  );
  const all = Promise.all(streams);
  await Promise.race([lead, all]);
  const long = await chat(side, [{ role: 'user', content: `${nonce()} ${texts.long}` }], S.longTokens);
  const done = await all;
  const from = long.start;
  const until = long.start + long.ttft;
  let stall = 0;
  /** @type {number[]} */
  const before = [];
  for (const r of done) {
    for (let i = 1; i < r.contentTimes.length; i++) {
      const [a, b] = [r.contentTimes[i - 1], r.contentTimes[i]];
      if (b > from && a < until) stall = Math.max(stall, b - a);
      else if (b <= from) before.push(b - a);
    }
  }
  if (done.some((r) => r.end < until))
    console.log(`  !! ${side.name}: a stream ended before the long prompt's first token; the stall is a lower bound`);
  return {
    stall,
    // The mean, not the median: events that reach the client together make most gaps 0 ms.
    normalGap: before.reduce((a, b) => a + b, 0) / before.length,
    eventsDuring: done.map((r) => r.contentTimes.filter((t) => t > from && t <= until).length),
    longTtft: long.ttft,
    longPromptTokens: long.promptTokens,
    prefillTps: long.promptTokens / (long.ttft / 1000),
    reused: reusedOf(long),
    streamTokens: done.reduce((sum, r) => sum + r.tokens, 0),
  };
}

/**
 * Workload 4: concurrent streams on a short prompt; completion tokens over the wall time.
 * @param {Side} side
 * @returns {Promise<DecodeRun>}
 */
async function decode(side) {
  const tag = nonce();
  const t0 = now();
  const results = await Promise.all(
    Array.from({ length: S.decodeStreams }, (_, i) =>
      chat(side, [{ role: 'user', content: `${tag} Stream ${i + 1}: ${STORY}` }], S.decodeTokens),
    ),
  );
  const wall = now() - t0;
  const tokens = results.reduce((sum, r) => sum + r.tokens, 0);
  return { tps: (tokens / wall) * 1000, ttftP50: median(results.map((r) => r.ttft)), tokens, wall };
}

/** A few requests on each side first, so neither pays for its first graphs inside a measured run. */
async function warmUp(/** @type {Side} */ side) {
  const tag = nonce();
  await Promise.all(
    Array.from({ length: SEQUENCES }, (_, i) => chat(side, [{ role: 'user', content: `${tag} ${i} ${STORY}` }], 8)),
  );
  await chat(side, [{ role: 'user', content: `${nonce()} ${texts.turnUsers[0]} ${texts.turnUsers[1]}` }], 8);
}

// ---- Servers -----------------------------------------------------------------------------------

/**
 * The API and `WORKERS` workers; `addWorker` starts one more on the same queue.
 * @param {Children} children
 * @param {Model} model
 * @param {string} prefix
 * @param {string} dataDir
 */
async function startConveyor(children, model, prefix, dataDir) {
  const { client, base, addWorker, started } = await launchConveyor(children, {
    dist: DIST,
    model,
    modelsDir: MODELS_DIR,
    redisUrl: REDIS_URL,
    prefix,
    dataDir,
    threads: THREADS,
    parallel: SEQUENCES,
    contextSize: CONTEXT_SIZE,
    workers: WORKERS,
    env: {
      ...(BATCH_INFLIGHT === null ? {} : { BATCH_INFLIGHT: String(BATCH_INFLIGHT) }),
      ...(PROMPT_CACHE === null ? {} : { PROMPT_CACHE }),
    },
  });
  console.log(
    `  Conveyor API + ${WORKERS} worker(s) × (THREADS=${THREADS}, PARALLEL=${SEQUENCES}, CONTEXT_SIZE=${CONTEXT_SIZE}), ` +
      `REDIS_PREFIX=${prefix}: ready in ${started.map((c) => `${c.name} ${(c.readyMs / 1000).toFixed(1)} s`).join(', ')}`,
  );
  /** @type {Side} */
  const side = { name: 'Conveyor', client, base, model: model.deploymentId };
  return { side, addWorker };
}

// ---- Figures as text ---------------------------------------------------------------------------

/** @param {number} ms */
const ms = (ms) => (Number.isFinite(ms) ? `${Math.round(ms)} ms` : '—');
/** @param {number} tps */
const tps = (tps) => (Number.isFinite(tps) ? `${tps.toFixed(0)} tok/s` : '—');
/**
 * The median over rounds, with each round's figure when there are several.
 * @param {number[]} values
 * @param {(v: number) => string} fmt
 */
function perRound(values, fmt) {
  if (values.length <= 1) return values.length ? fmt(values[0]) : '—';
  return `${fmt(median(values))} (${values.map((v) => fmt(v).replace(/ .*/, '')).join(' / ')})`;
}
/** @param {number} r */
const ratio = (r) => (Number.isFinite(r) ? `${r.toFixed(2)}×` : '—');
/** @param {SharedRun} r */
function reuseText(r) {
  const parts = [
    `reused ${r.reused} of ${r.promptTotal} prompt tokens (${((r.reused / r.promptTotal) * 100).toFixed(0)}%)`,
  ];
  if (r.evaluated !== null) parts.push(`evaluated ${r.evaluated}`);
  return parts.join(', ');
}

/** @param {SharedRun} r */
const sharedLine = (r) =>
  `wall ${ms(r.wall)}${r.ttftP50 === null ? '' : `, TTFT p50 ${ms(r.ttftP50)}`}; prompt ${r.promptMin === r.promptMax ? r.promptMin : `${r.promptMin}–${r.promptMax}`} tokens; ${reuseText(r)}`;

// ---- The run -----------------------------------------------------------------------------------

/**
 * @param {Side} llama
 * @param {Side} conveyor
 * @param {Children} children
 */
async function measure(llama, conveyor, children) {
  /** @type {Record<Side['name'], Runs>} */
  const runs = {
    'llama-server': { shared: [], batch: [], turns: [], long: [], decode: [] },
    Conveyor: { shared: [], batch: [], turns: [], long: [], decode: [] },
  };
  /** @type {string[][]} */
  const orders = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [llama, conveyor] : [conveyor, llama];
    orders.push(order.map((s) => s.name));
    console.log(`\n== Round ${round + 1} of ${ROUNDS}: ${order[0].name} first`);
    console.log(`-- shared-prefix batch: ${S.sharedRequests} requests, ${S.sharedConcurrency} at a time`);
    for (const side of order) {
      const r = await children.watch(sharedPrefixChat(side, S.sharedRequests, S.sharedConcurrency));
      runs[side.name].shared.push(r);
      console.log(`  ${side.name.padEnd(21)} ${sharedLine(r)}`);
      await sleep(SETTLE_MS);
      if (side === conveyor) {
        const b = await children.watch(sharedPrefixBatch(side, S.sharedRequests));
        runs.Conveyor.batch.push(b);
        console.log(`  ${'Conveyor Batches API'.padEnd(21)} ${sharedLine(b)}`);
        await sleep(SETTLE_MS);
      }
    }
    console.log(`-- multi-turn conversation: ${S.turns} turns, ${S.turnReplyTokens}-token replies`);
    for (const side of order) {
      const turns = await children.watch(multiTurn(side));
      runs[side.name].turns.push(turns);
      console.log(
        `  ${side.name.padEnd(12)} TTFT by turn ${turns.map((t) => Math.round(t.ttft)).join(', ')} ms; ` +
          `prompt ${turns.map((t) => t.promptTokens).join(', ')} tokens; reused ${turns.map((t) => t.reused).join(', ')}`,
      );
      await sleep(SETTLE_MS);
    }
    console.log(
      `-- long prompt during streams: ${S.streams} streams of ${S.streamTokens} tokens, the prompt after ${S.streamLead} events each`,
    );
    for (const side of order) {
      const r = await children.watch(longDuringStreams(side));
      runs[side.name].long.push(r);
      console.log(
        `  ${side.name.padEnd(12)} stall ${ms(r.stall)} (mean gap before it ${ms(r.normalGap)}; events per stream meanwhile ${r.eventsDuring.join('/')}); long prompt ${r.longPromptTokens} tokens, ` +
          `TTFT ${ms(r.longTtft)} = ${tps(r.prefillTps)} prefill, reused ${r.reused}`,
      );
      await sleep(SETTLE_MS);
    }
    console.log(`-- decode only: ${S.decodeStreams} streams of ${S.decodeTokens} tokens`);
    for (const side of order) {
      const r = await children.watch(decode(side));
      runs[side.name].decode.push(r);
      console.log(
        `  ${side.name.padEnd(12)} ${tps(r.tps)} (${r.tokens} tokens in ${ms(r.wall)}), TTFT p50 ${ms(r.ttftP50)}`,
      );
      await sleep(SETTLE_MS);
    }
  }
  return { runs, orders };
}

/**
 * The shared-prefix batch, larger, on Conveyor alone with 1 worker and then 2 (the second started for
 * each round and stopped after it), chat and Batches API.
 * @param {Side} conveyor
 * @param {() => Promise<ReadyChild>} addWorker
 * @param {Children} children
 * @returns {Promise<ScaleRuns[]>}
 */
async function measureScale(conveyor, addWorker, children) {
  /** @type {ScaleRuns[]} */
  const scale = [
    { workers: 1, chat: [], batch: [] },
    { workers: 2, chat: [], batch: [] },
  ];
  console.log(
    `\n== Scale: shared-prefix batch of ${S.scaleRequests} requests (chat: ${S.scaleConcurrency} at a time), Conveyor with 1 and 2 workers`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const entry of scale) {
      const extra = entry.workers === 2 ? await addWorker() : null;
      if (extra) await sleep(SETTLE_MS);
      const c = await children.watch(sharedPrefixChat(conveyor, S.scaleRequests, S.scaleConcurrency));
      entry.chat.push(c);
      await sleep(SETTLE_MS);
      const b = await children.watch(sharedPrefixBatch(conveyor, S.scaleRequests));
      entry.batch.push(b);
      console.log(`  round ${round + 1}, ${entry.workers} worker(s): chat ${sharedLine(c)}`);
      console.log(`  round ${round + 1}, ${entry.workers} worker(s): Batches API ${sharedLine(b)}`);
      if (extra) await children.stop(extra);
      await sleep(SETTLE_MS);
    }
  }
  return scale;
}

/**
 * A row of the figures table: each side's figure by round, the medians' ratio, and which way is better.
 * @param {string} workload
 * @param {string} figure
 * @param {number[]} llama
 * @param {number[]} conveyor
 * @param {(v: number) => string} fmt
 * @param {'lower' | 'higher'} better
 */
const figureRow = (workload, figure, llama, conveyor, fmt, better) => [
  workload,
  figure,
  perRound(llama, fmt),
  perRound(conveyor, fmt),
  ratio(median(conveyor) / median(llama)),
  better,
];

/** @param {boolean} met */
const yesNo = (met) => (met ? 'yes' : 'no');

/**
 * Prints the results and writes them as Markdown, JSON and an SVG chart under bench/results/.
 * @param {string[]} header
 * @param {{ runs: Record<Side['name'], Runs>, orders: string[][] }} measured
 * @param {ScaleRuns[] | null} scale
 */
function report(header, { runs, orders }, scale) {
  const L = runs['llama-server'];
  const C = runs.Conveyor;
  /** @param {SharedRun[]} list */
  const walls = (list) => list.map((r) => r.wall);
  /** @param {Turn[][]} conversations */
  const lastTtfts = (conversations) => conversations.map((turns) => turns[turns.length - 1].ttft);
  /** @type {Record<string, (x: Runs) => number[]>} each figure by round, of one side */
  const pick = {
    sharedWall: (x) => walls(x.shared),
    sharedTtft: (x) => x.shared.map((r) => r.ttftP50 ?? NaN),
    lastTtft: (x) => lastTtfts(x.turns),
    stall: (x) => x.long.map((r) => r.stall),
    longTtft: (x) => x.long.map((r) => r.longTtft),
    prefill: (x) => x.long.map((r) => r.prefillTps),
    decode: (x) => x.decode.map((r) => r.tps),
    decodeTtft: (x) => x.decode.map((r) => r.ttftP50),
  };
  /** Median of the figure, llama-server's and Conveyor's. @param {keyof typeof pick} key */
  const medians = (key) => [median(pick[key](L)), median(pick[key](C))];
  /** Conveyor ÷ llama-server, of the medians. @param {keyof typeof pick} key */
  const times = (key) => median(pick[key](C)) / median(pick[key](L));
  const batchTimes = median(walls(C.batch)) / median(walls(L.shared));
  const worstStall = Math.max(...pick.stall(C));

  const shared = `shared-prefix batch (${S.sharedRequests} × ~${S.sharedPromptTokens} tokens, ${S.sharedConcurrency} at a time)`;
  const conversation = `multi-turn conversation (${S.turns} turns)`;
  const long = `long prompt (~${S.longPromptTokens} tokens) during ${S.streams} streams`;
  const decodeOnly = `decode only (${S.decodeStreams} × ${S.decodeTokens} tokens)`;
  /** @type {[string, string, keyof typeof pick, (v: number) => string, 'lower' | 'higher'][]} */
  const figureList = [
    [shared, 'wall time', 'sharedWall', ms, 'lower'],
    [shared, 'TTFT p50', 'sharedTtft', ms, 'lower'],
    [conversation, 'last turn TTFT', 'lastTtft', ms, 'lower'],
    [long, 'stall: longest gap in the running streams', 'stall', ms, 'lower'],
    [long, 'long prompt TTFT', 'longTtft', ms, 'lower'],
    [long, 'prefill: prompt tokens ÷ TTFT', 'prefill', tps, 'higher'],
    [decodeOnly, 'aggregate tokens/s', 'decode', tps, 'higher'],
    [decodeOnly, 'TTFT p50', 'decodeTtft', ms, 'lower'],
  ];
  const figureRows = figureList.map(([workload, figure, key, fmt, better]) =>
    figureRow(workload, figure, pick[key](L), pick[key](C), fmt, better),
  );
  figureRows.splice(
    2,
    0,
    figureRow(
      `${shared}, Conveyor through the Batches API`,
      'wall time, upload to completed (llama-server: its chat wall time)',
      walls(L.shared),
      walls(C.batch),
      ms,
      'lower',
    ),
  );
  const figures = table(
    ['workload', 'figure', 'llama-server', 'Conveyor', 'Conveyor ÷ llama-server', 'better'],
    figureRows,
  );

  const turnsTable = table(
    [
      'turn',
      'prompt tokens (llama-server / Conveyor)',
      'llama-server TTFT',
      'reused (cache_n)',
      'Conveyor TTFT',
      'reused (cached_tokens)',
      'Conveyor ÷ llama-server',
    ],
    Array.from({ length: S.turns }, (_, t) => {
      const l = L.turns.map((turns) => turns[t]);
      const c = C.turns.map((turns) => turns[t]);
      /** @param {Turn[]} list @param {keyof Turn} field */
      const mid = (list, field) => Math.round(median(list.map((x) => x[field])));
      return [
        String(t + 1),
        `${mid(l, 'promptTokens')} / ${mid(c, 'promptTokens')}`,
        perRound(
          l.map((x) => x.ttft),
          ms,
        ),
        mid(l, 'reused'),
        perRound(
          c.map((x) => x.ttft),
          ms,
        ),
        mid(c, 'reused'),
        ratio(median(c.map((x) => x.ttft)) / median(l.map((x) => x.ttft))),
      ];
    }),
  );

  /** @type {(string | number)[][]} */
  const reuseRows = [];
  for (let r = 0; r < ROUNDS; r++) {
    /** @type {[string, SharedRun | undefined][]} */
    const named = [
      ['llama-server chat', L.shared[r]],
      ['Conveyor chat', C.shared[r]],
      ['Conveyor Batches API', C.batch[r]],
    ];
    for (const [name, run] of named) {
      if (!run) continue;
      reuseRows.push([
        r + 1,
        name,
        run.promptMin === run.promptMax ? run.promptMin : `${run.promptMin}–${run.promptMax}`,
        run.promptTotal,
        run.reused,
        run.evaluated ?? run.promptTotal - run.reused,
        `${((run.reused / run.promptTotal) * 100).toFixed(0)}%`,
      ]);
    }
  }
  const reuseTable = table(
    [
      'round',
      'shared-prefix batch',
      'prompt tokens per request',
      'prompt tokens, all',
      'reused',
      'evaluated',
      'reused %',
    ],
    reuseRows,
  );

  const roundsTable = table(
    [
      'round',
      'side (in order)',
      'shared wall',
      'shared TTFT p50',
      'Batches API wall',
      'last-turn TTFT',
      'stall',
      'events in the stall',
      'long TTFT',
      'decode',
    ],
    orders.flatMap((order, r) =>
      order.map((name) => {
        const x = runs[/** @type {Side['name']} */ (name)];
        return [
          r + 1,
          name,
          ms(x.shared[r].wall),
          ms(x.shared[r].ttftP50 ?? NaN),
          x.batch[r] ? ms(x.batch[r].wall) : '—',
          ms(lastTtfts(x.turns)[r]),
          ms(x.long[r].stall),
          x.long[r].eventsDuring.join(' / '),
          ms(x.long[r].longTtft),
          tps(x.decode[r].tps),
        ];
      }),
    ),
  );

  /** @type {(string | number)[][]} */
  const goalRows = [
    [
      'shared-prefix batch wall time, Conveyor ÷ llama-server',
      '≤ 0.60×',
      ratio(times('sharedWall')),
      yesNo(times('sharedWall') <= 0.6),
    ],
    ['… through the Batches API ÷ llama-server chat', '≤ 0.60×', ratio(batchTimes), yesNo(batchTimes <= 0.6)],
    [
      'multi-turn last-turn TTFT, Conveyor ÷ llama-server',
      '≤ 1.00×',
      ratio(times('lastTtft')),
      yesNo(times('lastTtft') <= 1),
    ],
    ['stall of the running streams, Conveyor, worst round', '≤ 200 ms', ms(worstStall), yesNo(worstStall <= 200)],
    ['decode tokens/s, Conveyor ÷ llama-server', '≥ 0.95×', ratio(times('decode')), yesNo(times('decode') >= 0.95)],
  ];
  let scaleTable = '';
  /** @type {{ chat: number, batch: number } | null} */
  let speedUp = null;
  if (scale) {
    const [one, two] = scale;
    speedUp = {
      chat: median(walls(one.chat)) / median(walls(two.chat)),
      batch: median(walls(one.batch)) / median(walls(two.batch)),
    };
    /** @param {SharedRun[]} list */
    const reused = (list) => Math.round(median(list.map((r) => r.reused)));
    scaleTable = table(
      [
        'Conveyor, shared-prefix batch',
        '1 worker',
        '2 workers',
        'speed-up (1 worker ÷ 2 workers)',
        'reused, 1 / 2 workers',
      ],
      [
        [
          `chat, ${S.scaleRequests} requests, ${S.scaleConcurrency} at a time: wall time`,
          perRound(walls(one.chat), ms),
          perRound(walls(two.chat), ms),
          ratio(speedUp.chat),
          `${reused(one.chat)} / ${reused(two.chat)}`,
        ],
        [
          `Batches API, ${S.scaleRequests} lines: upload to completed`,
          perRound(walls(one.batch), ms),
          perRound(walls(two.batch), ms),
          ratio(speedUp.batch),
          `${reused(one.batch)} / ${reused(two.batch)}`,
        ],
      ],
    );
    goalRows.push(
      ['two workers ÷ one, shared-prefix batch over chat', '≥ 1.70×', ratio(speedUp.chat), yesNo(speedUp.chat >= 1.7)],
      ['two workers ÷ one, through the Batches API', '≥ 1.70×', ratio(speedUp.batch), yesNo(speedUp.batch >= 1.7)],
    );
  }
  const goals = table(['goal', 'target', 'measured', 'met'], goalRows);

  const sizes =
    `prompt sizes (usage.prompt_tokens): shared-prefix ${C.shared[0].promptMin}–${C.shared[0].promptMax}, ` +
    `multi-turn ${C.turns[0].map((t) => t.promptTokens).join(' → ')}, long prompt ${C.long[0].longPromptTokens}`;
  const sections = [
    'Ratios are Conveyor ÷ llama-server: for wall times and TTFTs lower is better (below 1.00× Conveyor is faster); ' +
      'for tokens/s higher is better. Figures are the median over rounds, with each round’s figure in brackets.',
    figures,
    `### Goals\n\n${goals}`,
    `### Multi-turn conversation, by turn (median over rounds)\n\n${turnsTable}`,
    '### Prompt reuse in the shared-prefix batch (sums over the replies)\n\n' +
      'llama-server: reused = timings.cache_n, evaluated = timings.prompt_n; ' +
      `Conveyor: reused = usage.prompt_tokens_details.cached_tokens.\n\n${reuseTable}`,
    '### Each round\n\n"events in the stall": content events each running stream sent while the long prompt ' +
      `was taken in (from its request to its first token).\n\n${roundsTable}`,
    ...(scale ? [`### Scale: one worker and two\n\n${scaleTable}`] : []),
  ];
  console.log(`\n== Results\n${sizes}\n\n${sections.join('\n\n')}\n`);

  mkdirSync(RESULTS_DIR, { recursive: true });
  const md =
    `# Prompt cache and chunked prefill: Conveyor beside llama-server\n\n${header.map((l) => `- ${l}`).join('\n')}\n` +
    `- ${sizes}\n\n${sections.join('\n\n')}\n\n![figures by workload](${opts.out}.svg)\n`;
  writeFileSync(resolve(RESULTS_DIR, `${opts.out}.md`), md);
  writeFileSync(
    resolve(RESULTS_DIR, `${opts.out}.json`),
    JSON.stringify({ header, sizes: S, orders, llamaServer: L, conveyor: C, scale, speedUp }, null, 2) + '\n',
  );
  const [sharedWall, sharedTtft, stall, longTtft, decodeTps] = [
    medians('sharedWall'),
    medians('sharedTtft'),
    medians('stall'),
    medians('longTtft'),
    medians('decode'),
  ];
  const svg = barChartSvg({
    title: 'Prompt-heavy workloads: Conveyor beside llama-server',
    subtitle: `${opts.model} model, ${THREADS} thread, ${SEQUENCES} sequences, ${os.cpus().length}-core ${os.cpus()[0]?.model?.trim() ?? ''}; median of ${ROUNDS} round(s)`,
    series: [
      { name: 'llama-server', color: '#888' },
      { name: 'Conveyor (chat)', color: '#1f6feb' },
      { name: 'Conveyor (Batches API)', color: '#8250df' },
    ],
    panels: [
      {
        title: 'Shared-prefix batch',
        unit: 'ms, lower is better',
        groups: [
          { label: 'wall time', values: [...sharedWall, median(walls(C.batch))] },
          { label: 'TTFT p50', values: [...sharedTtft, null] },
        ],
      },
      {
        title: 'Multi-turn TTFT by turn',
        unit: 'ms, lower is better',
        groups: Array.from({ length: S.turns }, (_, t) => ({
          label: `turn ${t + 1}`,
          values: [median(L.turns.map((x) => x[t].ttft)), median(C.turns.map((x) => x[t].ttft)), null],
        })),
      },
      {
        title: 'Long prompt during streams',
        unit: 'ms, lower is better',
        groups: [
          { label: 'stall', values: [...stall, null] },
          { label: 'long prompt TTFT', values: [...longTtft, null] },
        ],
      },
      {
        title: 'Decode only',
        unit: 'tokens/s, higher is better',
        groups: [{ label: `${S.decodeStreams} streams`, values: [...decodeTps, null] }],
      },
      ...(scale
        ? [
            {
              title: 'Shared-prefix batch, Conveyor',
              unit: 'ms, lower is better',
              groups: scale.map((s) => ({
                label: `${s.workers} worker${s.workers > 1 ? 's' : ''}`,
                values: [null, median(walls(s.chat)), median(walls(s.batch))],
              })),
            },
          ]
        : []),
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
    ...runHeader('bench/prompt-cache.bench.mjs'),
    `load average at the start (1 / 5 / 15 min): ${loadAverage()}`,
    `model: ${opts.model} (${relative(ROOT, model.path)}); greedy (temperature 0), ignore_eos; ${ROUNDS} round(s), the side going first alternating`,
  ];
  console.log(`# Prompt cache and chunked prefill: Conveyor beside llama-server\n${header.join('\n')}`);
  const children = new Children(ROOT);
  const prefix = `bench-${randomBytes(6).toString('hex')}`;
  currentPrefix = prefix;
  const dataDir = mkdtempSync(join(os.tmpdir(), 'conveyor-prompt-cache-'));
  /** @type {Side[]} */
  const sides = [];
  try {
    console.log('\n== Starting both servers');
    const llamaServer = await startLlamaServer(children, {
      binary,
      modelPath: model.path,
      threads: THREADS,
      sequences: SEQUENCES,
      contextSize: CONTEXT_SIZE,
      extra: ['-fa', 'auto'],
    });
    /** @type {Side} */
    const llama = { name: 'llama-server', client: llamaServer.client, base: llamaServer.base, model: 'model' };
    sides.push(llama);
    const conveyor = await startConveyor(children, model, prefix, dataDir);
    sides.push(conveyor.side);
    header.push(
      `llama-server: ${relative(os.homedir(), binary)} ${llamaServer.args.join(' ')} (prompt cache on, as it ships)`,
      `Conveyor: API + ${WORKERS} worker process(es), each THREADS=${THREADS} PARALLEL=${SEQUENCES} CONTEXT_SIZE=${CONTEXT_SIZE} FLASH_ATTENTION=auto UV_THREADPOOL_SIZE=${WORKER_THREADPOOL_SIZE}` +
        `; BATCH_INFLIGHT=${BATCH_INFLIGHT ?? 'default (16)'}; PROMPT_CACHE=${PROMPT_CACHE ?? 'default (full)'}; Redis ${REDIS_URL}`,
    );

    console.log('\n== Calibrating the prompt text with the model tokenizer');
    const tokenize = async (/** @type {string} */ text) =>
      /** @type {{ tokens: number[] }} */ (
        JSON.parse(await llama.client.call(`${llama.base}/tokenize`, { method: 'POST', body: { content: text } }))
      ).tokens.length;
    texts.shared = await textOf(tokenize, 1, S.sharedPromptTokens - FRAME.shared);
    texts.turnSystem = await textOf(tokenize, 2, S.turnSystemTokens - FRAME.conversation);
    texts.turnUsers = [];
    for (let t = 0; t < S.turns; t++)
      texts.turnUsers.push(await textOf(tokenize, 10 + t, S.turnUserTokens - FRAME.question));
    texts.long = await textOf(tokenize, 3, S.longPromptTokens - FRAME.long);
    console.log(
      `  text tokens: shared ${await tokenize(texts.shared)}, conversation system ${await tokenize(texts.turnSystem)}, ` +
        `turns ${texts.turnUsers[0] ? await tokenize(texts.turnUsers[0]) : 0} each (about), long ${await tokenize(texts.long)}`,
    );

    console.log('\n== Warming up both sides');
    for (const side of sides) await children.watch(warmUp(side));
    const measured = await measure(llama, conveyor.side, children);
    const scale = opts.scale ? await measureScale(conveyor.side, conveyor.addWorker, children) : null;
    header.push(`load average at the end (1 / 5 / 15 min): ${loadAverage()}`);
    const problems = children.problems();
    if (problems.length)
      console.log(`  !! ${problems.length} warning/error line(s), e.g.:\n     ${problems.slice(0, 5).join('\n     ')}`);
    report(header, measured, scale);
  } finally {
    for (const side of sides) side.client.destroy();
    await children.stopAll();
    rmSync(dataDir, { recursive: true, force: true });
    await deleteKeys(REDIS_URL, prefix).catch(
      /** @param {unknown} err */
      (err) =>
        console.error(`  could not delete ${prefix}:* keys: ${err instanceof Error ? err.message : String(err)}`),
    );
    currentPrefix = null;
  }
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
