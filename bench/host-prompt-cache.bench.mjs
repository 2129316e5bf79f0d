#!/usr/bin/env node
// A conversation pushed out of a worker's only sequence and then taken up again, in process: prompt A
// (long instructions and a question), prompt B (other instructions), then A's instructions with a new
// question. With the prompt cache in host memory (PROMPT_CACHE_RAM) the third request reads A's prefix back;
// without it (budget 0) it computes it again. Time to first token of each, for both, taking turns round
// by round so that a machine's load falls on both alike; each round's instructions are new.
//
// Usage: node bench/host-prompt-cache.bench.mjs [--model bench|tiny|/path.gguf] [--rounds N] [--tokens N]
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { pct, table } from './lib/stats.mjs';
import { rerunWithWorkerThreadpool } from './lib/threadpool.mjs';

/** @import { LlamaCppEngine } from '../libs/engine/src/index.js' */
/** @typedef {{ ms: number, prompt: number, cached: number }} Asked */
/** @typedef {{ first: Asked, other: Asked, again: Asked, bytes: number }} Round */
/** @typedef {{ name: string, engine: LlamaCppEngine, rows: Round[] }} Side */

rerunWithWorkerThreadpool();

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const USAGE = 'Usage: node bench/host-prompt-cache.bench.mjs [--model bench|tiny|/path.gguf] [--rounds N] [--tokens N]';
const opts = parseCli(USAGE, {
  model: { type: 'string', default: 'bench' },
  rounds: { type: 'string', default: '5' },
  tokens: { type: 'string', default: '2000' },
});
const ROUNDS = positiveInt('--rounds', opts.rounds);
const TOKENS = positiveInt('--tokens', opts.tokens);

/** @type {typeof import('../libs/engine/src/index.js')} */
const { LlamaCppEngine } = await import(pathToFileURL(resolve(ROOT, 'dist/libs/engine/src/index.js')).href);
/** @type {typeof import('../libs/gguf/src/index.js')} */
const { ensurePresetModel, isModelPresetName } = await import(
  pathToFileURL(resolve(ROOT, 'dist/libs/gguf/src/index.js')).href
);

async function modelPath() {
  if (isModelPresetName(opts.model)) return ensurePresetModel(opts.model, resolve(ROOT, 'models'));
  const path = resolve(opts.model);
  if (!path.toLowerCase().endsWith('.gguf') || !existsSync(path))
    throw new Error(`--model must be tiny, bench or an existing .gguf file (got "${opts.model}")`);
  return path;
}

/**
 * Instructions of about TOKENS tokens (as `engine` tokenizes them), their first words new each round.
 * @param {LlamaCppEngine} engine
 * @param {string} topic
 * @param {number} round
 */
function instructions(engine, topic, round) {
  const text = `Round ${round}. You answer questions about ${topic}. ${'Answer briefly, carefully and in plain words. '.repeat(TOKENS)}`;
  const words = text.split(' ');
  const tokens = engine.countPromptTokens({ messages: [{ role: 'system', content: words.slice(0, 400).join(' ') }] });
  return words.slice(0, Math.floor((400 * TOKENS) / tokens)).join(' ');
}

/**
 * Time to the first token of a reply, and the prompt tokens reused.
 * @param {LlamaCppEngine} engine
 * @param {string} system
 * @param {string} question
 * @returns {Promise<Asked>}
 */
async function ask(engine, system, question) {
  const started = performance.now();
  let first = 0;
  const result = await engine.generate(
    {
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: question },
      ],
      sampling: { temperature: 0, ignoreEos: true },
      maxTokens: 1,
      stop: [],
    },
    { onStart: () => undefined, onOutput: () => (first ||= performance.now()) },
  );
  return { ms: first - started, prompt: result.usage.promptTokens, cached: result.usage.cachedTokens ?? 0 };
}

async function main() {
  const path = await modelPath();
  const options = {
    modelPath: path,
    contextSize: 2 ** Math.ceil(Math.log2(TOKENS + 256)),
    parallel: 1,
    threads: 1,
    gpu: false,
  };
  /** @type {Side[]} */
  const sides = [
    { name: 'PROMPT_CACHE_RAM=0', engine: await LlamaCppEngine.load({ ...options, promptCacheRam: 0 }), rows: [] },
    {
      name: 'PROMPT_CACHE_RAM=1024',
      engine: await LlamaCppEngine.load({ ...options, promptCacheRam: 2 ** 30 }),
      rows: [],
    },
  ];
  for (let round = -1; round < ROUNDS; round++) {
    const order = round % 2 ? [...sides].reverse() : sides;
    for (const side of order) {
      const a = instructions(side.engine, 'lighthouses', round);
      const b = instructions(side.engine, 'glaciers', round);
      const first = await ask(side.engine, a, 'What does a keeper do?');
      const other = await ask(side.engine, b, 'How do they move?');
      const again = await ask(side.engine, a, 'Why are they striped?');
      if (round < 0) continue; // warm-up
      side.rows.push({ first, other, again, bytes: side.engine.hostCache.bytes });
      console.log(
        `round ${round + 1}: ${side.name}: A ${first.ms.toFixed(0)} ms, B ${other.ms.toFixed(0)} ms, ` +
          `A again ${again.ms.toFixed(0)} ms (${again.cached} of ${again.prompt} tokens reused)`,
      );
    }
  }
  /** @type {(side: Side, pick: (row: Round) => number) => number} */
  const median = (side, pick) => pct(side.rows.map(pick), 50);
  console.log(
    table(
      [
        '',
        'A: prompt tokens',
        'A: first token (ms)',
        'B, pushing A out (ms)',
        'A again (ms)',
        'A again: reused',
        'host bytes',
      ],
      sides.map((s) => [
        s.name,
        s.rows[0]?.first.prompt ?? 0,
        median(s, (r) => r.first.ms).toFixed(0),
        median(s, (r) => r.other.ms).toFixed(0),
        median(s, (r) => r.again.ms).toFixed(0),
        median(s, (r) => r.again.cached),
        s.rows.at(-1)?.bytes ?? 0,
      ]),
    ),
  );
  for (const side of sides) await side.engine.dispose();
}

await main();
