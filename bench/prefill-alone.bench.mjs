#!/usr/bin/env node
// Prefill throughput of a prompt alone (nothing else running), in process: prompt tokens ÷ time to
// first token, for each build and prompt cache mode named, taking turns round by round so that a
// machine's load falls on all of them alike. With the cache off each round computes the whole prompt.
//
// Usage: node bench/prefill-alone.bench.mjs [--model bench|tiny|/path.gguf] [--rounds N] [--tokens N]
//        [--dist DIR[,DIR...]] [--modes off[,exact,full]]
import { existsSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { pct, table } from './lib/stats.mjs';
import { rerunWithWorkerThreadpool } from './lib/threadpool.mjs';

/** @import { DistModules } from './lib/dist.mjs' */
/** @import { LlamaCppEngine } from '../libs/engine/src/index.js' */

rerunWithWorkerThreadpool();

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const USAGE =
  'Usage: node bench/prefill-alone.bench.mjs [--model bench|tiny|/path.gguf] [--rounds N] [--tokens N] [--dist DIR[,DIR...]] [--modes off[,exact,full]]';
const opts = parseCli(USAGE, {
  model: { type: 'string', default: 'bench' },
  rounds: { type: 'string', default: '5' },
  tokens: { type: 'string', default: '1500' },
  dist: { type: 'string', default: resolve(ROOT, 'dist') },
  modes: { type: 'string', default: 'off' },
});
const ROUNDS = positiveInt('--rounds', opts.rounds);
const TOKENS = positiveInt('--tokens', opts.tokens);
const DISTS = opts.dist.split(',').map((d) => resolve(d));
const MODES = /** @type {Array<'off' | 'exact' | 'full'>} */ (opts.modes.split(','));

/**
 * @template {keyof DistModules} P
 * @param {string} dist
 * @param {P} path
 * @returns {Promise<DistModules[P]>}
 */
const importDist = (dist, path) => import(pathToFileURL(resolve(dist, path)).href);

async function modelPath() {
  const { ensurePresetModel, isModelPresetName } = await importDist(DISTS[0], 'libs/gguf/src/index.js');
  if (isModelPresetName(opts.model)) return ensurePresetModel(opts.model, resolve(ROOT, 'models'));
  const path = resolve(opts.model);
  if (!path.toLowerCase().endsWith('.gguf') || !existsSync(path))
    throw new Error(`--model must be tiny, bench or an existing .gguf file (got "${opts.model}")`);
  return path;
}

/**
 * Prompt tokens ÷ seconds to the first token, for one prompt of about TOKENS tokens.
 * @param {LlamaCppEngine} engine
 * @param {number} round
 */
async function prefill(engine, round) {
  // A different first word each round: nothing of it is in any cache.
  const content = `Round ${round}. ${'The keeper climbed the stairs of the lighthouse in the storm. '.repeat(Math.ceil(TOKENS / 12))}`;
  const prompt = engine.countPromptTokens({ messages: [{ role: 'user', content }] });
  const words = content.split(' ');
  const cut = words.slice(0, Math.floor((words.length * TOKENS) / prompt)).join(' ');
  const started = performance.now();
  let first = 0;
  const result = await engine.generate(
    {
      messages: [{ role: 'user', content: cut }],
      sampling: { temperature: 0, ignoreEos: true },
      maxTokens: 1,
      stop: [],
    },
    { onStart: () => undefined, onOutput: () => (first ||= performance.now()) },
  );
  return { tokens: result.usage.promptTokens, tokPerS: result.usage.promptTokens / ((first - started) / 1000) };
}

async function main() {
  const path = await modelPath();
  /** @type {{ name: string, engine: LlamaCppEngine, figures: number[], tokens: number }[]} */
  const sides = [];
  for (const dist of DISTS) {
    const { LlamaCppEngine } = await importDist(dist, 'libs/engine/src/index.js');
    for (const mode of MODES) {
      const engine = await LlamaCppEngine.load({
        modelPath: path,
        contextSize: Math.max(2048, 2 ** Math.ceil(Math.log2(TOKENS + 64))),
        parallel: 1,
        threads: 1,
        gpu: false,
        promptCache: mode,
      });
      sides.push({ name: `${basename(dirname(dist))}/${basename(dist)} ${mode}`, engine, figures: [], tokens: 0 });
    }
  }
  for (const side of sides) await prefill(side.engine, -1); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    // Each round in another order, so no side always runs first.
    const order = round % 2 ? [...sides].reverse() : sides;
    for (const side of order) {
      const { tokens, tokPerS } = await prefill(side.engine, round);
      side.figures.push(tokPerS);
      side.tokens = tokens;
      console.log(`round ${round + 1}: ${side.name}: ${tokens} tokens, ${tokPerS.toFixed(0)} tok/s`);
    }
  }
  const base = pct(sides[0].figures, 50);
  console.log(
    table(
      ['build and mode', 'prompt tokens', 'prefill tok/s (median)', 'each round', `÷ ${sides[0].name}`],
      sides.map((s) => [
        s.name,
        s.tokens,
        pct(s.figures, 50).toFixed(0),
        s.figures.map((f) => f.toFixed(0)).join(' / '),
        `${(pct(s.figures, 50) / base).toFixed(3)}×`,
      ]),
    ),
  );
  for (const side of sides) await side.engine.dispose();
}

await main();
