#!/usr/bin/env node
// The commonest batch on Conveyor's Batches API beside llama-server: many chat lines sharing a handful of
// long system prompts, some of them repeated word for word. Same model, threads, sequences and machine.
//
// The workload is seeded, so every run sends the same file: K system prompts of about P tokens each
// (sized with the model's tokenizer, printed as usage.prompt_tokens), N lines each of one system prompt and
// a short user item of its own, shuffled, R of them exact repeats of an earlier line. Greedy, ignore_eos,
// max_tokens 8. In each round both sides run the same file, one after the other (never both at once), the
// side going first alternating:
//   1. llama-server with its defaults and -np PARALLEL, fed the lines in file order PARALLEL at a time
//      (the script a user writes instead of a batch: a pool of workers each taking the next line);
//      wall time from the first request to the last reply;
//   2. Conveyor: the file uploaded (POST /v1/files), a batch created (POST /v1/batches) and polled until
//      it completes, on one API and one worker (THREADS, PARALLEL); wall time from the upload to completed.
// Prompt tokens evaluated: prompt_tokens − cached_tokens, summed over the replies (on Conveyor over the
// distinct responses of the output file, a response under several custom_ids counted once), beside the
// floor: every system prompt once and each distinct line's own part once, from llama-server's own
// template and tokenizer. Then on Conveyor alone: a batch of identical greedy lines beside one of as many
// distinct lines of the same shape. Every round's prompts start with a nonce of their own, so no side finds
// a cache warmed by an earlier round.
//
// Usage: node bench/batch.bench.mjs [--lines N] [--prompts K] [--repeats R] [--rounds N] [--threads N]
//        [--parallel N] [--prompt-tokens N] [--identical N] [--context-size N] [--model bench|tiny|/path.gguf]
//        [--dist DIR] [--out NAME] [--quick]
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureLlamaServer } from '../scripts/llama-server-build.mjs';
import { runBatchFile } from './lib/batch-run.mjs';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { startConveyor } from './lib/conveyor.mjs';
import { startLlamaServer } from './lib/llama-server.mjs';
import { resolveBenchModel } from './lib/model.mjs';
import { pool } from './lib/pool.mjs';
import { Children, stopChildrenOnSignal } from './lib/processes.mjs';
import { deleteKeys } from './lib/redis.mjs';
import { assertBuilt, loadAverage, runHeader } from './lib/report.mjs';
import { median, now, sleep, table } from './lib/stats.mjs';
import { WORKER_THREADPOOL_SIZE } from './lib/threadpool.mjs';
import { seededRandom, seededWords } from './lib/words.mjs';

/** @import { HttpClient } from './lib/http.mjs' */
/** @import { OutputLine, Usage } from './lib/batch-run.mjs' */
/** @typedef {{ role: 'system' | 'user', content: string }} Message */
/** @typedef {{ name: 'llama-server' | 'Conveyor', client: HttpClient, base: string, model: string }} Side */
/**
 * A line of the batch: its system prompt and user item by index; `first` is the index of the line it
 * repeats word for word, or its own.
 * @typedef {{ id: string, prompt: number, item: number, first: number }} Line
 */
/**
 * One side's run of one file. `evaluated`: prompt_tokens − cached_tokens summed over the replies (on
 * Conveyor over its distinct responses); `replies`: the replies that count (llama-server: every line;
 * Conveyor: one per distinct response); `sameAsFirst`: repeat lines whose reply text is their first's.
 * @typedef {object} Run
 * @property {number} wall
 * @property {number} promptTotal prompt tokens of every line, as the server reports them
 * @property {number} evaluated
 * @property {number} replies
 * @property {number} promptMin
 * @property {number} promptMax
 * @property {number} sameAsFirst
 * @property {number | null} timingsEvaluated llama-server's timings.prompt_n summed (null on Conveyor)
 * @property {number | null} timingsReused llama-server's timings.cache_n summed (null on Conveyor)
 * @property {number | null} folded Conveyor: lines whose response another line's also is
 * @property {unknown} plan Conveyor: the batch object's `plan` field, if it has one
 */
/**
 * The batch object's `plan` field (Conveyor's extension), the part the bench reads.
 * @param {object} batch
 * @returns {{ repeats_folded: number } | undefined}
 */
const planOf = (batch) => /** @type {{ plan?: { repeats_folded: number } }} */ (batch).plan;

/**
 * What llama-server answers a chat completion, the fields the bench reads.
 * @typedef {{ usage: Usage, timings?: { prompt_n?: number, cache_n?: number },
 *             choices: { message: { content: string | null } }[] }} Completion
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MODELS_DIR = resolve(ROOT, 'models');
const RESULTS_DIR = resolve(ROOT, 'bench/results');
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
/** The workload's seed: the same words, order and repeats in every run. */
const SEED = 20261;
const MAX_TOKENS = 8;
/** A pause between two runs, so one side's threads have gone idle before the other starts. */
const SETTLE_MS = 300;

const USAGE =
  'Usage: node bench/batch.bench.mjs [--lines N] [--prompts K] [--repeats R] [--rounds N] [--threads N] ' +
  '[--parallel N] [--prompt-tokens N] [--identical N] [--context-size N] [--model bench|tiny|/path.gguf] ' +
  '[--dist DIR] [--out NAME] [--quick]';
const opts = parseCli(USAGE, {
  lines: { type: 'string' },
  prompts: { type: 'string' },
  repeats: { type: 'string' },
  rounds: { type: 'string' },
  threads: { type: 'string', default: '1' },
  parallel: { type: 'string', default: '4' },
  'prompt-tokens': { type: 'string' },
  identical: { type: 'string' },
  'context-size': { type: 'string', default: '2048' },
  model: { type: 'string', default: 'bench' },
  dist: { type: 'string', default: resolve(ROOT, 'dist') },
  out: { type: 'string', default: 'batch' },
  quick: { type: 'boolean', default: false },
});
/** The defaults, and `--quick`'s: a smoke run of a minute or so. */
const DEFAULTS = opts.quick
  ? { lines: 24, prompts: 3, repeats: 5, rounds: 1, promptTokens: 500, identical: 12 }
  : { lines: 96, prompts: 6, repeats: 19, rounds: 3, promptTokens: 1000, identical: 40 };
/**
 * @param {string} name
 * @param {string | undefined} raw
 * @param {number} fallback
 */
const intOpt = (name, raw, fallback) => (raw === undefined ? fallback : positiveInt(name, raw));
const LINES = intOpt('--lines', opts.lines, DEFAULTS.lines);
const PROMPTS = intOpt('--prompts', opts.prompts, DEFAULTS.prompts);
const REPEATS = opts.repeats === '0' ? 0 : intOpt('--repeats', opts.repeats, DEFAULTS.repeats);
const ROUNDS = intOpt('--rounds', opts.rounds, DEFAULTS.rounds);
const THREADS = positiveInt('--threads', opts.threads);
const PARALLEL = positiveInt('--parallel', opts.parallel);
const PROMPT_TOKENS = intOpt('--prompt-tokens', opts['prompt-tokens'], DEFAULTS.promptTokens);
const IDENTICAL = intOpt('--identical', opts.identical, DEFAULTS.identical);
const CONTEXT_SIZE = positiveInt('--context-size', opts['context-size']);
const DIST = resolve(opts.dist);
const DISTINCT = LINES - REPEATS;
if (DISTINCT < PROMPTS) {
  console.error(`--lines ${LINES} less --repeats ${REPEATS} leaves fewer distinct lines than --prompts ${PROMPTS}`);
  process.exit(2);
}
if (CONTEXT_SIZE < PROMPT_TOKENS + 64 + MAX_TOKENS) {
  console.error(`--context-size ${CONTEXT_SIZE} is too small for prompts of ~${PROMPT_TOKENS} tokens`);
  process.exit(2);
}
if (!/^[\w.-]+$/.test(opts.out)) {
  console.error(`--out must be a plain file name (got "${opts.out}")`);
  process.exit(2);
}

// ---- The workload ------------------------------------------------------------------------------

const WORDS = (
  'customer order invoice refund shipment parcel delivery address account balance payment card ' +
  'subscription renewal discount coupon warranty repair replacement return label carrier tracking ' +
  'delay damage missing wrong size color model serial receipt store online phone email chat agent ' +
  'manager policy deadline urgent polite brief summary category priority tone reply escalate close'
).split(' ');
const RUN_TAG = randomBytes(3).toString('hex');
let nonceCount = 0;
/** A tag no earlier prompt started with, so no cache holds the prompt it begins. */
const nonce = () => `Desk ${RUN_TAG}-${String(++nonceCount).padStart(4, '0')}.`;

/**
 * The system prompt `k`'s text (without its nonce), `count` words long.
 * @param {number} k
 * @param {number} count
 */
const systemWords = (k, count) =>
  `You sort support tickets for desk ${k + 1}. ${seededWords(WORDS, SEED + 100 + k, count)}`;
/** @param {number} item */
const itemText = (item) =>
  `Ticket ${item + 1}: ${seededWords(WORDS, SEED + 10_000 + item, 8)}. Give its category in one word.`;

/**
 * The lines in file order: `DISTINCT` lines, the system prompts dealt out evenly, shuffled; then `REPEATS`
 * copies of lines already placed, each put somewhere after the line it repeats. Seeded: the same every run.
 * @returns {Line[]}
 */
function workload() {
  const random = seededRandom(SEED);
  /** @type {{ prompt: number, item: number }[]} */
  const list = Array.from({ length: DISTINCT }, (_, d) => ({ prompt: d % PROMPTS, item: d }));
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  for (let r = 0; r < REPEATS; r++) {
    const of = Math.floor(random() * list.length);
    const at = of + 1 + Math.floor(random() * (list.length - of));
    list.splice(at, 0, list[of]);
  }
  /** @type {Map<object, number>} */
  const firstAt = new Map();
  return list.map((l, i) => {
    if (!firstAt.has(l)) firstAt.set(l, i);
    return { id: `line-${String(i + 1).padStart(3, '0')}`, prompt: l.prompt, item: l.item, first: firstAt.get(l) ?? i };
  });
}

/** The system prompts' texts, calibrated once: `text[k]` for prompt k. */
const texts = { system: /** @type {string[]} */ ([]) };

/**
 * The messages of a line, its system prompt opened by the round's tag for that prompt.
 * @param {string[]} tags one per system prompt
 * @param {{ prompt: number, item: number }} line
 * @returns {Message[]}
 */
const messagesOf = (tags, line) => [
  { role: 'system', content: `${tags[line.prompt]} ${texts.system[line.prompt]}` },
  { role: 'user', content: itemText(line.item) },
];

/**
 * A chat-completions body: greedy, `MAX_TOKENS` tokens whatever the model samples.
 * @param {string} model
 * @param {Message[]} messages
 */
const body = (model, messages) => ({ model, messages, max_tokens: MAX_TOKENS, temperature: 0, ignore_eos: true });

// ---- Tokens, as llama-server's template and tokenizer make them ----------------------------------

/**
 * The prompt tokens of `messages` as the model's chat template and tokenizer make them (llama-server's
 * `/apply-template`, then `/tokenize` with the special tokens parsed, as the server takes a chat prompt).
 * @param {Side} llama
 * @param {Message[]} messages
 * @returns {Promise<number[]>}
 */
async function promptTokens(llama, messages) {
  const { prompt } = /** @type {{ prompt: string }} */ (
    JSON.parse(await llama.client.call(`${llama.base}/apply-template`, { method: 'POST', body: { messages } }))
  );
  const { tokens } = /** @type {{ tokens: number[] }} */ (
    JSON.parse(
      await llama.client.call(`${llama.base}/tokenize`, {
        method: 'POST',
        body: { content: prompt, add_special: true, parse_special: true },
      }),
    )
  );
  return tokens;
}

/**
 * Sizes each system prompt so that a line with it comes to about `PROMPT_TOKENS` prompt tokens: the most
 * words for which line 1's prompt, with a nonce of the usual length, stays within the target.
 * @param {Side} llama
 */
async function calibrate(llama) {
  const tag = nonce();
  for (let k = 0; k < PROMPTS; k++) {
    /** @param {number} count */
    const size = async (count) =>
      (
        await promptTokens(llama, [
          { role: 'system', content: `${tag} ${systemWords(k, count)}` },
          { role: 'user', content: itemText(0) },
        ])
      ).length;
    let lo = 1;
    let hi = PROMPT_TOKENS;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((await size(mid)) <= PROMPT_TOKENS) lo = mid;
      else hi = mid - 1;
    }
    texts.system[k] = systemWords(k, lo);
  }
}

/**
 * The floor of the prompt tokens a server must evaluate for `lines`: every distinct token prefix once,
 * which is each system prompt once and each distinct line's own part once (the nodes of the token trie
 * of the distinct lines' prompts: sorted, each adds its tokens past the longest prefix it shares with
 * the one before). Also each line's prompt tokens by id, to check against what the servers report.
 * @param {Side} llama
 * @param {string[]} tags
 * @param {Line[]} lines
 */
async function floorOf(llama, tags, lines) {
  /** @type {Map<number, number[]>} */
  const byFirst = new Map();
  for (const line of lines)
    if (!byFirst.has(line.first)) byFirst.set(line.first, await promptTokens(llama, messagesOf(tags, line)));
  const sorted = [...byFirst.values()].sort((a, b) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
    return a.length - b.length;
  });
  let floor = 0;
  for (let s = 0; s < sorted.length; s++) {
    const [prev, cur] = [sorted[s - 1] ?? [], sorted[s]];
    let shared = 0;
    while (shared < Math.min(prev.length, cur.length) && prev[shared] === cur[shared]) shared++;
    floor += cur.length - shared;
  }
  /** @type {Map<string, number>} */
  const sizes = new Map(lines.map((l) => [l.id, byFirst.get(l.first)?.length ?? 0]));
  return { floor, sizes };
}

// ---- The two sides -----------------------------------------------------------------------------

/**
 * One non-streamed chat completion, as a client script sends it.
 * @param {Side} side
 * @param {Message[]} messages
 * @returns {Promise<Completion>}
 */
async function complete(side, messages) {
  const text = await side.client.call(`${side.base}/v1/chat/completions`, {
    method: 'POST',
    body: body(side.model, messages),
  });
  return JSON.parse(text);
}

/**
 * How many repeat lines got the same text as the line they repeat.
 * @param {Line[]} lines
 * @param {(string | null)[]} texts each line's reply text, in file order
 */
const sameAsFirst = (lines, texts) => lines.filter((l, i) => l.first !== i && texts[i] === texts[l.first]).length;

/**
 * The lines through llama-server, in file order, `PARALLEL` at a time.
 * @param {Side} llama
 * @param {string[]} tags
 * @param {Line[]} lines
 * @returns {Promise<Run>}
 */
async function llamaServerRun(llama, tags, lines) {
  const t0 = now();
  const replies = await pool(lines.length, PARALLEL, (i) => complete(llama, messagesOf(tags, lines[i])));
  const wall = now() - t0;
  const prompts = replies.map((r) => r.usage.prompt_tokens);
  const cached = replies.reduce((sum, r) => sum + (r.usage.prompt_tokens_details?.cached_tokens ?? 0), 0);
  const timings = replies.every((r) => r.timings?.prompt_n !== undefined && r.timings.cache_n !== undefined);
  const total = prompts.reduce((a, b) => a + b, 0);
  return {
    wall,
    promptTotal: total,
    evaluated: total - cached,
    replies: replies.length,
    promptMin: Math.min(...prompts),
    promptMax: Math.max(...prompts),
    sameAsFirst: sameAsFirst(
      lines,
      replies.map((r) => r.choices[0]?.message.content ?? null),
    ),
    timingsEvaluated: timings ? replies.reduce((sum, r) => sum + (r.timings?.prompt_n ?? 0), 0) : null,
    timingsReused: timings ? replies.reduce((sum, r) => sum + (r.timings?.cache_n ?? 0), 0) : null,
    folded: null,
    plan: undefined,
  };
}

/**
 * The lines as one batch through Conveyor's Files and Batches API, upload to completed. Checks that every
 * line succeeded and that each custom_id is in the output exactly once.
 * @param {Side} conveyor
 * @param {string[]} tags
 * @param {Line[]} lines
 * @returns {Promise<Run>}
 */
async function batchRun(conveyor, tags, lines) {
  const jsonl =
    lines
      .map((l) =>
        JSON.stringify({
          custom_id: l.id,
          method: 'POST',
          url: '/v1/chat/completions',
          body: body(conveyor.model, messagesOf(tags, l)),
        }),
      )
      .join('\n') + '\n';
  const { batch, wall, output } = await runBatchFile(conveyor.base, jsonl, { fileName: 'batch.jsonl' });
  if (batch.request_counts?.failed)
    throw new Error(`batch ${batch.id}: ${batch.request_counts.failed} line(s) failed (${batch.error_file_id})`);
  /** @type {Map<string, OutputLine>} */
  const byId = new Map();
  for (const l of output) {
    if (byId.has(l.custom_id)) throw new Error(`batch ${batch.id}: ${l.custom_id} is in its output twice`);
    byId.set(l.custom_id, l);
  }
  const missing = lines.filter((l) => !byId.has(l.id)).map((l) => l.id);
  const unknown = [...byId.keys()].filter((id) => !lines.some((l) => l.id === id));
  if (missing.length || unknown.length)
    throw new Error(
      `batch ${batch.id}: output lacks ${missing.join(', ') || 'none'}; has unknown ${unknown.join(', ') || 'none'}`,
    );
  /** @type {Map<string, Usage>} a response under several custom_ids counted once */
  const responses = new Map();
  /** @type {(string | null)[]} */
  const replyTexts = [];
  const prompts = lines.map((l) => {
    const response = byId.get(l.id)?.response;
    const usage = response?.body.usage;
    if (!response || response.status_code !== 200 || !usage)
      throw new Error(`batch ${batch.id}: ${l.id} has no successful response`);
    responses.set(response.request_id ?? response.body.id ?? l.id, usage);
    const reply = /** @type {{ choices?: { message?: { content?: string | null } }[] }} */ (response.body);
    replyTexts.push(reply.choices?.[0]?.message?.content ?? null);
    return usage.prompt_tokens;
  });
  return {
    wall,
    promptTotal: prompts.reduce((a, b) => a + b, 0),
    evaluated: [...responses.values()].reduce(
      (sum, u) => sum + u.prompt_tokens - (u.prompt_tokens_details?.cached_tokens ?? 0),
      0,
    ),
    replies: responses.size,
    promptMin: Math.min(...prompts),
    promptMax: Math.max(...prompts),
    sameAsFirst: sameAsFirst(lines, replyTexts),
    timingsEvaluated: null,
    timingsReused: null,
    // Folded lines are told by the plan; a line without one is folded when it shares another's response.
    folded: planOf(batch)?.repeats_folded ?? lines.length - responses.size,
    plan: 'plan' in batch ? batch.plan : undefined,
  };
}

/**
 * Conveyor alone: a batch of `IDENTICAL` copies of one line, and one of as many distinct lines with the
 * same system prompt (each its own item), in the order given; each under a fresh nonce.
 * @param {Side} conveyor
 * @param {('identical' | 'distinct')[]} order
 */
async function identicalVsDistinct(conveyor, order) {
  /** @type {Record<'identical' | 'distinct', Run | null>} */
  const result = { identical: null, distinct: null };
  for (const kind of order) {
    const tags = Array.from({ length: PROMPTS }, () => nonce());
    /** @type {Line[]} */
    const lines = Array.from({ length: IDENTICAL }, (_, i) => ({
      id: `${kind}-${String(i + 1).padStart(3, '0')}`,
      prompt: 0,
      item: kind === 'identical' ? 0 : i,
      first: kind === 'identical' ? 0 : i,
    }));
    result[kind] = await batchRun(conveyor, tags, lines);
    await sleep(SETTLE_MS);
  }
  return /** @type {Record<'identical' | 'distinct', Run>} */ (result);
}

/** A few requests on each side first, so neither pays for its first graphs inside a measured run. */
async function warmUp(/** @type {Side} */ side) {
  const tags = Array.from({ length: PROMPTS }, () => nonce());
  await Promise.all(
    Array.from({ length: PARALLEL }, (_, i) => complete(side, messagesOf(tags, { prompt: i % PROMPTS, item: i }))),
  );
  if (side.name === 'Conveyor') {
    const lines = Array.from({ length: PARALLEL }, (_, i) => ({ id: `warm-${i}`, prompt: 0, item: i, first: i }));
    await batchRun(side, tags, lines);
  }
}

// ---- Figures as text ---------------------------------------------------------------------------

/** @param {number} v */
const ms = (v) => (Number.isFinite(v) ? `${Math.round(v)} ms` : '—');
/** @param {number} r */
const ratio = (r) => (Number.isFinite(r) ? `${r.toFixed(2)}×` : '—');
/** @param {number} part @param {number} whole */
const pct = (part, whole) => `${((part / whole) * 100).toFixed(0)}%`;
/**
 * The median over rounds, with the range when there are several.
 * @param {number[]} values
 * @param {(v: number) => string} fmt
 */
const spread = (values, fmt) =>
  values.length > 1
    ? `${fmt(median(values))} (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})`
    : fmt(values[0]);
/** @param {number} v */
const int = (v) => String(Math.round(v));

/**
 * @param {Run} r
 * @param {number} floor
 */
const runLine = (r, floor) =>
  `wall ${ms(r.wall)}; prompt tokens ${r.promptTotal} (${r.promptMin}–${r.promptMax} a line), evaluated ${r.evaluated} ` +
  `(reused ${pct(r.promptTotal - r.evaluated, r.promptTotal)}, ${ratio(r.evaluated / floor)} the floor)` +
  (r.timingsEvaluated === null ? '' : `; timings: prompt_n ${r.timingsEvaluated}, cache_n ${r.timingsReused}`) +
  (r.folded === null ? '' : `; ${r.replies} distinct responses (${r.folded} line(s) folded into another's)`) +
  `; repeats with their first's reply ${r.sameAsFirst}/${REPEATS}`;

// ---- The run -----------------------------------------------------------------------------------

/**
 * @typedef {{ floor: number, order: string[], llama: Run, conveyor: Run,
 *             identical: Run, distinct: Run, sizeGap: number }} Round
 */

/**
 * @param {Side} llama
 * @param {Side} conveyor
 * @param {Children} children
 * @returns {Promise<Round[]>}
 */
async function measure(llama, conveyor, children) {
  const lines = workload();
  /** @type {Round[]} */
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const tags = Array.from({ length: PROMPTS }, () => nonce());
    const { floor, sizes } = await floorOf(llama, tags, lines);
    const order = round % 2 === 0 ? [llama, conveyor] : [conveyor, llama];
    console.log(
      `\n== Round ${round + 1} of ${ROUNDS}: ${order[0].name} first; floor ${floor} prompt tokens (every system prompt once, each distinct line's own part once)`,
    );
    /** @type {Partial<Record<Side['name'], Run>>} */
    const runs = {};
    for (const side of order) {
      const r = await children.watch(
        side === llama ? llamaServerRun(llama, tags, lines) : batchRun(conveyor, tags, lines),
      );
      runs[side.name] = r;
      console.log(
        `  ${(side === llama ? `llama-server, ${PARALLEL} at a time` : 'Conveyor Batches API').padEnd(26)} ${runLine(r, floor)}`,
      );
      if (r.plan !== undefined) console.log(`  ${''.padEnd(26)} plan: ${JSON.stringify(r.plan)}`);
      await sleep(SETTLE_MS);
    }
    const llamaRun = /** @type {Run} */ (runs['llama-server']);
    const conveyorRun = /** @type {Run} */ (runs.Conveyor);
    // The lines' prompt tokens as the floor counted them, against what llama-server's usage says.
    const sizeGap = Math.abs(llamaRun.promptTotal - lines.reduce((sum, l) => sum + (sizes.get(l.id) ?? 0), 0));
    const pair = await children.watch(
      identicalVsDistinct(conveyor, round % 2 === 0 ? ['identical', 'distinct'] : ['distinct', 'identical']),
    );
    console.log(
      `  Conveyor, ${IDENTICAL} identical lines ${ms(pair.identical.wall)} (evaluated ${pair.identical.evaluated}), ` +
        `${IDENTICAL} distinct ${ms(pair.distinct.wall)} (evaluated ${pair.distinct.evaluated}): ${ratio(pair.identical.wall / pair.distinct.wall)}`,
    );
    rounds.push({
      floor,
      order: order.map((s) => s.name),
      llama: llamaRun,
      conveyor: conveyorRun,
      identical: pair.identical,
      distinct: pair.distinct,
      sizeGap,
    });
  }
  return rounds;
}

/**
 * Prints the results and writes them as Markdown and JSON under bench/results/.
 * @param {string[]} header
 * @param {Round[]} rounds
 * @param {Line[]} lines
 */
function report(header, rounds, lines) {
  /** @param {(r: Round) => number} f */
  const all = (f) => rounds.map(f);
  /** @param {(r: Round) => number} f */
  const mid = (f) => median(all(f));
  const floor = mid((r) => r.floor);
  /**
   * @param {string} name
   * @param {(r: Round) => Run} pick
   */
  const sideRow = (name, pick) => {
    const total = mid((r) => pick(r).promptTotal);
    const evaluated = mid((r) => pick(r).evaluated);
    return [
      name,
      spread(
        all((r) => pick(r).wall),
        ms,
      ),
      int(total),
      spread(
        all((r) => pick(r).evaluated),
        int,
      ),
      pct(total - evaluated, total),
      ratio(evaluated / floor),
    ];
  };
  const wallRatio = mid((r) => r.conveyor.wall) / mid((r) => r.llama.wall);
  const evaluatedRatio = mid((r) => r.conveyor.evaluated) / mid((r) => r.llama.evaluated);
  const sides = table(
    ['side', 'wall (median, min–max)', 'prompt tokens', 'evaluated (median, min–max)', 'reused', 'evaluated ÷ floor'],
    [
      sideRow(`llama-server, file order, ${PARALLEL} at a time`, (r) => r.llama),
      sideRow('Conveyor Batches API, upload to completed', (r) => r.conveyor),
      ['Conveyor ÷ llama-server', ratio(wallRatio), '', ratio(evaluatedRatio), '', ''],
    ],
  );
  const identicalRatio = mid((r) => r.identical.wall) / mid((r) => r.distinct.wall);
  const pairTable = table(
    ['Conveyor Batches API', 'wall (median, min–max)', 'prompt tokens', 'evaluated', 'distinct responses'],
    /** @type {['identical' | 'distinct', string][]} */ ([
      ['identical', `${IDENTICAL} identical greedy lines`],
      ['distinct', `${IDENTICAL} distinct lines, the same system prompt`],
    ]).map(([kind, name]) => [
      name,
      spread(
        all((r) => r[kind].wall),
        ms,
      ),
      int(mid((r) => r[kind].promptTotal)),
      int(mid((r) => r[kind].evaluated)),
      int(mid((r) => r[kind].replies)),
    ]),
  );
  const roundsTable = table(
    [
      'round',
      'first',
      'floor',
      'llama-server wall',
      'evaluated',
      'Conveyor wall',
      'evaluated',
      'folded lines',
      'identical ÷ distinct',
    ],
    rounds.map((r, i) => [
      i + 1,
      r.order[0],
      r.floor,
      ms(r.llama.wall),
      r.llama.evaluated,
      ms(r.conveyor.wall),
      r.conveyor.evaluated,
      r.conveyor.folded ?? '—',
      ratio(r.identical.wall / r.distinct.wall),
    ]),
  );
  const plans = rounds.map((r) => r.conveyor.plan).filter((p) => p !== undefined);
  const first = rounds[0];
  const promptSizes = `${Math.min(...all((r) => r.llama.promptMin))}–${Math.max(...all((r) => r.llama.promptMax))}`;
  const workloadLine =
    `workload: ${PROMPTS} system prompts, ${LINES} lines (${DISTINCT} distinct, ${REPEATS} exact repeats of earlier lines), ` +
    `shuffled (seed ${SEED}); a line's prompt ${promptSizes} tokens (usage.prompt_tokens, llama-server); ` +
    `greedy, ignore_eos, max_tokens ${MAX_TOKENS}`;
  const floorLine =
    `floor: ${floor} prompt tokens, every system prompt once and each distinct line's own part once ` +
    `(the distinct prompts' token trie, from llama-server's /apply-template and /tokenize)` +
    (first.sizeGap ? `; !! those prompts came to ${first.sizeGap} tokens off llama-server's usage` : '');
  const checks = [
    `every custom_id in the output exactly once, every line succeeded: yes (each round)`,
    `repeat lines with the same reply text as their first line: llama-server ${all((r) => r.llama.sameAsFirst).join(' / ')}, ` +
      `Conveyor ${all((r) => r.conveyor.sameAsFirst).join(' / ')} of ${REPEATS}`,
    `Conveyor lines folded into another line's response (the batch's plan.repeats_folded): ${all((r) => r.conveyor.folded ?? 0).join(' / ')}`,
    plans.length
      ? `the batch object's plan field: ${JSON.stringify(plans[plans.length - 1])}`
      : 'the batch object has no plan field',
    first.llama.timingsEvaluated === null
      ? 'llama-server returned no timings'
      : `llama-server's timings agree with its usage: prompt_n = prompt_tokens − cached_tokens in ${rounds.filter((r) => r.llama.timingsEvaluated === r.llama.evaluated).length} of ${ROUNDS} round(s)`,
  ];
  const summary =
    `Conveyor ÷ llama-server: wall ${ratio(wallRatio)}, prompt tokens evaluated ${ratio(evaluatedRatio)}; ` +
    `identical greedy lines cost ${ratio(identicalRatio)} of as many distinct ones`;
  const sections = [
    summary,
    'Evaluated = prompt_tokens − cached_tokens summed over the replies (llama-server: as it reports them; ' +
      'Conveyor: over the output file, a response under several custom_ids counted once); reused = 1 − evaluated ÷ prompt tokens.\n\n' +
      sides,
    `### Identical lines on Conveyor\n\n${pairTable}`,
    `### Checks\n\n${checks.map((c) => `- ${c}`).join('\n')}`,
    `### Each round\n\n${roundsTable}`,
  ];
  console.log(`\n== Results\n${workloadLine}\n${floorLine}\n\n${sections.join('\n\n')}\n`);

  mkdirSync(RESULTS_DIR, { recursive: true });
  const md =
    `# The commonest batch: Conveyor's Batches API beside llama-server\n\n${header.map((l) => `- ${l}`).join('\n')}\n` +
    `- ${workloadLine}\n- ${floorLine}\n\n${sections.join('\n\n')}\n`;
  writeFileSync(resolve(RESULTS_DIR, `${opts.out}.md`), md);
  writeFileSync(
    resolve(RESULTS_DIR, `${opts.out}.json`),
    JSON.stringify(
      {
        header,
        settings: {
          lines: LINES,
          prompts: PROMPTS,
          repeats: REPEATS,
          rounds: ROUNDS,
          threads: THREADS,
          parallel: PARALLEL,
          promptTokens: PROMPT_TOKENS,
          identical: IDENTICAL,
          contextSize: CONTEXT_SIZE,
          maxTokens: MAX_TOKENS,
          seed: SEED,
        },
        lines,
        wallRatio,
        evaluatedRatio,
        identicalRatio,
        rounds,
      },
      null,
      2,
    ) + '\n',
  );
  console.log(
    `wrote ${['md', 'json'].map((e) => relative(process.cwd(), resolve(RESULTS_DIR, `${opts.out}.${e}`))).join(', ')}`,
  );
}

async function main() {
  assertBuilt(DIST);
  const model = await resolveBenchModel(DIST, opts.model, MODELS_DIR);
  const binary = ensureLlamaServer({ log: (line) => console.log(line) });
  const header = [
    ...runHeader('bench/batch.bench.mjs'),
    `load average at the start (1 / 5 / 15 min): ${loadAverage()}`,
    `model: ${opts.model} (${relative(ROOT, model.path)}); ${ROUNDS} round(s), the side going first alternating`,
  ];
  console.log(`# The commonest batch: Conveyor's Batches API beside llama-server\n${header.join('\n')}`);
  const children = new Children(ROOT);
  const prefix = `bench-${randomBytes(6).toString('hex')}`;
  currentPrefix = prefix;
  const dataDir = mkdtempSync(join(os.tmpdir(), 'conveyor-batch-'));
  /** @type {Side[]} */
  const sides = [];
  try {
    console.log('\n== Starting both servers');
    const server = await startLlamaServer(children, {
      binary,
      modelPath: model.path,
      threads: THREADS,
      sequences: PARALLEL,
      contextSize: CONTEXT_SIZE,
    });
    /** @type {Side} */
    const llama = { name: 'llama-server', client: server.client, base: server.base, model: 'model' };
    sides.push(llama);
    const conveyor = await startConveyor(children, {
      dist: DIST,
      model,
      modelsDir: MODELS_DIR,
      redisUrl: REDIS_URL,
      prefix,
      dataDir,
      threads: THREADS,
      parallel: PARALLEL,
      contextSize: CONTEXT_SIZE,
    });
    console.log(
      `  Conveyor API + 1 worker (THREADS=${THREADS}, PARALLEL=${PARALLEL}, CONTEXT_SIZE=${CONTEXT_SIZE}), REDIS_PREFIX=${prefix}: ` +
        `ready in ${conveyor.started.map((c) => `${c.name} ${(c.readyMs / 1000).toFixed(1)} s`).join(', ')}`,
    );
    /** @type {Side} */
    const conveyorSide = { name: 'Conveyor', client: conveyor.client, base: conveyor.base, model: model.deploymentId };
    sides.push(conveyorSide);
    header.push(
      `llama-server: ${relative(os.homedir(), binary)} ${server.args.join(' ')} (otherwise its defaults: prompt cache and --cache-ram on)`,
      `Conveyor: API + 1 worker, THREADS=${THREADS} PARALLEL=${PARALLEL} CONTEXT_SIZE=${CONTEXT_SIZE} FLASH_ATTENTION=auto ` +
        `UV_THREADPOOL_SIZE=${WORKER_THREADPOOL_SIZE}, the rest its defaults; Redis ${REDIS_URL}`,
    );

    console.log(`\n== Sizing ${PROMPTS} system prompts to ~${PROMPT_TOKENS} prompt tokens a line`);
    await calibrate(llama);
    console.log('\n== Warming up both sides');
    for (const side of sides) await children.watch(warmUp(side));
    const rounds = await measure(llama, conveyorSide, children);
    header.push(`load average at the end (1 / 5 / 15 min): ${loadAverage()}`);
    const problems = children.problems();
    if (problems.length)
      console.log(`  !! ${problems.length} warning/error line(s), e.g.:\n     ${problems.slice(0, 5).join('\n     ')}`);
    report(header, rounds, workload());
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
