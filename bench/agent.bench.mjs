#!/usr/bin/env node
// Agent-shaped traffic on Conveyor beside llama-server, on the same model, threads, sequences and machine,
// in one run: what a coding agent sends. One session of several turns, each re-sending the whole history
// after a long system prompt that lists the agent's tools; during each turn's prefill, a short side request
// of the kind agents make alongside (a title for the session), on other instructions.
//
// Per turn and side it prints: the turn's TTFT, its prompt and reused tokens, and the side request's TTFT.
// The goals it checks: a short request arriving while a long prompt is taken in gets its first token within
// 0.5 s (never after the whole prompt); each later turn evaluates only its new tokens (reuse), and the side
// requests never cost the session its cached prefix.
// Every session starts with a nonce of its own, so no side finds a warm cache from an earlier run.
//
// Usage: node bench/agent.bench.mjs [--model bench|tiny|/path.gguf] [--rounds N] [--turns N]
//        [--system-tokens N] [--context-size N] [--side-delay-ms N] [--dist DIR]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveBenchModel } from './lib/model.mjs';
import { assertBuilt, loadAverage, runHeader } from './lib/report.mjs';
import { startLlamaServer } from './lib/llama-server.mjs';
import { Children, stopChildrenOnSignal } from './lib/processes.mjs';
import { startConveyor as launchConveyor } from './lib/conveyor.mjs';
import { deleteKeys } from './lib/redis.mjs';
import { median, sleep, table } from './lib/stats.mjs';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { ensureLlamaServer } from '../scripts/llama-server-build.mjs';
import { seededWords } from './lib/words.mjs';

/** @import { HttpClient, StreamResult } from './lib/http.mjs' */
/** @typedef {{ role: 'system' | 'user' | 'assistant', content: string }} Message */
/** @typedef {{ name: 'llama-server' | 'Conveyor', client: HttpClient, base: string, model: string }} Side */
/**
 * One turn as measured: the turn's TTFT, prompt and reused tokens; the side request's TTFT, and how far into
 * the turn it was sent.
 * @typedef {{ ttft: number, promptTokens: number, reused: number, sideTtft: number, sideSentAt: number }} Turn
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MODELS_DIR = resolve(ROOT, 'models');
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const THREADS = 1;
const SEQUENCES = 4;
const SETTLE_MS = 300;

const USAGE =
  'Usage: node bench/agent.bench.mjs [--model bench|tiny|/path.gguf] [--rounds N] [--turns N] ' +
  '[--system-tokens N] [--context-size N] [--side-delay-ms N] [--dist DIR]';
const opts = parseCli(USAGE, {
  model: { type: 'string', default: 'bench' },
  rounds: { type: 'string', default: '2' },
  turns: { type: 'string', default: '4' },
  'system-tokens': { type: 'string', default: '3000' },
  'context-size': { type: 'string', default: '8192' },
  'side-delay-ms': { type: 'string', default: '300' },
  dist: { type: 'string', default: resolve(ROOT, 'dist') },
});
const ROUNDS = positiveInt('--rounds', opts.rounds);
const TURNS = positiveInt('--turns', opts.turns);
const SYSTEM_TOKENS = positiveInt('--system-tokens', opts['system-tokens']);
const CONTEXT_SIZE = positiveInt('--context-size', opts['context-size']);
const SIDE_DELAY_MS = positiveInt('--side-delay-ms', opts['side-delay-ms']);
const DIST = resolve(opts.dist);
/** Each turn: the user's message, the reply's tokens; the side request's tokens. */
const USER_TOKENS = 150;
const REPLY_TOKENS = 32;
const SIDE_TOKENS = 8;
/** The short goal: a side request's first token, however long the prompt taken in beside it. */
const SIDE_GOAL_MS = 500;

// ---- Prompt text -------------------------------------------------------------------------------

const WORDS = (
  'read write edit search list files path line range pattern glob grep shell command output error test ' +
  'build patch diff apply commit branch status function class module import export return value type ' +
  'string number integer boolean array object property required optional default description example'
).split(' ');
const RUN_TAG = randomBytes(3).toString('hex');
let nonces = 0;
const nonce = () => `Session ${RUN_TAG}-${String(++nonces).padStart(3, '0')}.`;

/**
 * `count` words of the bench's vocabulary, the same for the same seed.
 * @param {number} seed
 * @param {number} count
 */
const words = (seed, count) => seededWords(WORDS, seed, count);

/**
 * An agent's instructions: prose, then its tools as JSON schemas, as agents render them into the prompt.
 * @param {number} seed
 */
function toolText(seed) {
  const tools = Array.from({ length: 5 }, (_, i) => ({
    type: 'function',
    function: {
      name: `tool_${i + 1}`,
      description: words(seed + i, 30),
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', description: words(seed + 100 + i, 8) },
          offset: { type: 'integer', minimum: 0, maximum: 9007199254740991 },
          limit: { type: 'integer', exclusiveMinimum: 0 },
        },
        required: ['path'],
        additionalProperties: false,
      },
    },
  }));
  return `# Tools\n${JSON.stringify(tools)}`;
}

/**
 * The longest text of prose and tools at most `target` tokens, as the model's tokenizer counts them.
 * @param {(text: string) => Promise<number>} tokenize
 * @param {number} target
 */
async function systemText(tokenize, target) {
  const tools = toolText(7);
  const left = target - (await tokenize(tools));
  let lo = 1;
  let hi = Math.max(1, left);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((await tokenize(words(1, mid))) <= left) lo = mid;
    else hi = mid - 1;
  }
  return `${words(1, lo)}\n${tools}`;
}

// ---- The session -------------------------------------------------------------------------------

/**
 * @param {Side} side
 * @param {Message[]} messages
 * @param {number} maxTokens
 * @returns {Promise<StreamResult>}
 */
function chat(side, messages, maxTokens) {
  const body = { model: side.model, messages, max_tokens: maxTokens, temperature: 0, ignore_eos: true };
  return side.client.streamChat(`${side.base}/v1/chat/completions`, body);
}

/** @param {StreamResult} r */
const reusedOf = (r) => r.timings?.cache_n ?? r.cachedTokens ?? 0;

/**
 * One agent session: each turn re-sends the history; `SIDE_DELAY_MS` into each turn, a title request.
 * @param {Side} side
 * @param {string} system
 * @returns {Promise<Turn[]>}
 */
async function session(side, system) {
  /** @type {Message[]} */
  const messages = [{ role: 'system', content: `${nonce()} ${system}` }];
  /** @type {Turn[]} */
  const turns = [];
  for (let t = 0; t < TURNS; t++) {
    messages.push({ role: 'user', content: `Step ${t + 1}: ${words(500 + t, USER_TOKENS / 5)}` });
    const started = performance.now();
    const turn = chat(side, messages, REPLY_TOKENS);
    await sleep(SIDE_DELAY_MS);
    const sideSentAt = performance.now() - started;
    const title = await chat(
      side,
      [
        { role: 'system', content: `${nonce()} Write a title of five words for this conversation.` },
        { role: 'user', content: String(messages[1]?.content).slice(0, 200) },
      ],
      SIDE_TOKENS,
    );
    const r = await turn;
    messages.push({ role: 'assistant', content: r.content });
    turns.push({ ttft: r.ttft, promptTokens: r.promptTokens, reused: reusedOf(r), sideTtft: title.ttft, sideSentAt });
  }
  return turns;
}

// ---- Servers -----------------------------------------------------------------------------------

/**
 * @param {Children} children
 * @param {import('./lib/model.mjs').Model} model
 * @param {string} prefix
 * @param {string} dataDir
 * @returns {Promise<Side>}
 */
async function startConveyor(children, model, prefix, dataDir) {
  const { client, base } = await launchConveyor(children, {
    dist: DIST,
    model,
    modelsDir: MODELS_DIR,
    redisUrl: REDIS_URL,
    prefix,
    dataDir,
    threads: THREADS,
    parallel: SEQUENCES,
    contextSize: CONTEXT_SIZE,
  });
  console.log(`  Conveyor API + 1 worker (THREADS=${THREADS}, PARALLEL=${SEQUENCES}, CONTEXT_SIZE=${CONTEXT_SIZE})`);
  return { name: 'Conveyor', client, base, model: model.deploymentId };
}

// ---- The run -----------------------------------------------------------------------------------

/** @param {number} v */
const ms = (v) => `${Math.round(v)} ms`;

/**
 * @param {string[]} header
 * @param {Record<Side['name'], Turn[][]>} runs
 */
function report(header, runs) {
  /** @param {Turn[][]} sessions @param {(t: Turn, i: number) => number} pick @param {(i: number) => boolean} which */
  const med = (sessions, pick, which) =>
    median(sessions.flatMap((turns) => turns.filter((_, i) => which(i)).map(pick)));
  const first = (/** @type {number} */ i) => i === 0;
  const later = (/** @type {number} */ i) => i > 0;
  const rows = [];
  for (const [figure, pick, which] of /** @type {[string, (t: Turn) => number, (i: number) => boolean][]} */ ([
    ['side request TTFT, during the first turn (whole prompt taken in)', (t) => t.sideTtft, first],
    ['side request TTFT, during later turns', (t) => t.sideTtft, later],
    ['first turn TTFT', (t) => t.ttft, first],
    ['later turns TTFT', (t) => t.ttft, later],
  ])) {
    const l = med(runs['llama-server'], pick, which);
    const c = med(runs.Conveyor, pick, which);
    rows.push([figure, ms(l), ms(c), `${(c / l).toFixed(2)}×`]);
  }
  /** Of the later turns: prompt tokens evaluated beyond what the last turn's prompt and reply left. @param {Turn[][]} sessions */
  const fresh = (sessions) => median(sessions.flatMap((turns) => turns.slice(1).map((t) => t.promptTokens - t.reused)));
  rows.push([
    'later turns: prompt tokens evaluated (not reused)',
    fresh(runs['llama-server']),
    fresh(runs.Conveyor),
    '',
  ]);
  // The goal is about a short request behind a long prompt: the first turn's, taken in whole.
  const worstSide = Math.max(...runs.Conveyor.map((turns) => turns[0]?.sideTtft ?? NaN));
  console.log(`\n# Agent session: Conveyor beside llama-server\n${header.join('\n')}\n`);
  console.log(table(['figure (median over rounds)', 'llama-server', 'Conveyor', 'Conveyor ÷ llama-server'], rows));
  console.log(
    `\nGoal: a side request's first token within ${SIDE_GOAL_MS} ms while a long prompt is taken in (first turns): ` +
      `worst ${ms(worstSide)} — ${worstSide <= SIDE_GOAL_MS ? 'met' : 'NOT met'}`,
  );
}

async function main() {
  assertBuilt(DIST);
  const model = await resolveBenchModel(DIST, opts.model, MODELS_DIR);
  const binary = ensureLlamaServer({ log: (line) => console.log(line) });
  const header = [
    ...runHeader('bench/agent.bench.mjs'),
    `model: ${opts.model} (${relative(ROOT, model.path)}); ${ROUNDS} round(s) of a ${TURNS}-turn session, the side going first alternating; ` +
      `system prompt ~${SYSTEM_TOKENS} tokens, ${USER_TOKENS}-token steps, ${REPLY_TOKENS}-token replies, a ${SIDE_TOKENS}-token side request ${SIDE_DELAY_MS} ms into each turn`,
  ];
  console.log(header.join('\n'));
  const children = new Children(ROOT);
  const prefix = `bench-${randomBytes(6).toString('hex')}`;
  currentPrefix = prefix;
  const dataDir = mkdtempSync(join(os.tmpdir(), 'conveyor-agent-'));
  /** @type {Side[]} */
  const sides = [];
  try {
    const server = await startLlamaServer(children, {
      binary,
      modelPath: model.path,
      threads: THREADS,
      sequences: SEQUENCES,
      contextSize: CONTEXT_SIZE,
      extra: ['-fa', 'auto'],
    });
    /** @type {Side} */
    const llama = { name: 'llama-server', client: server.client, base: server.base, model: 'model' };
    sides.push(llama, await startConveyor(children, model, prefix, dataDir));
    header.push(`llama-server ${server.args.join(' ')}; Conveyor: defaults, 1 worker`);
    const tokenize = async (/** @type {string} */ text) =>
      /** @type {{ tokens: number[] }} */ (
        JSON.parse(await llama.client.call(`${llama.base}/tokenize`, { method: 'POST', body: { content: text } }))
      ).tokens.length;
    const system = await systemText(tokenize, SYSTEM_TOKENS);
    // Warm-up: each side's first graphs outside the measured runs.
    for (const side of sides) await children.watch(chat(side, [{ role: 'user', content: `${nonce()} hello` }], 4));
    /** @type {Record<Side['name'], Turn[][]>} */
    const runs = { 'llama-server': [], Conveyor: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const turns = await children.watch(session(side, system));
        runs[side.name].push(turns);
        console.log(
          `  round ${round + 1} ${side.name.padEnd(12)} TTFT ${turns.map((t) => ms(t.ttft)).join(', ')}; ` +
            `prompt ${turns.map((t) => t.promptTokens).join(', ')}; reused ${turns.map((t) => t.reused).join(', ')}; ` +
            `side TTFT ${turns.map((t) => ms(t.sideTtft)).join(', ')}`,
        );
        await sleep(SETTLE_MS);
      }
    }
    header.push(`load average at the end (1 / 5 / 15 min): ${loadAverage()}`);
    report(header, runs);
  } finally {
    for (const side of sides) side.client.destroy();
    await children.stopAll();
    rmSync(dataDir, { recursive: true, force: true });
    await deleteKeys(REDIS_URL, prefix).catch(() => undefined);
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
