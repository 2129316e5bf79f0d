#!/usr/bin/env node
// How fast one stream can go per token with node-llama-cpp, beside llama-server's own figure, in one
// run: no queue, no HTTP on our side. Three ways to generate the same greedy reply, taking turns:
//
//   llama-server       its own `timings.predicted_per_token_ms` (the server measures its decode loop);
//   Conveyor engine    LlamaCppEngine.generate() from dist/, ms between consecutive tokens;
//   addon loop         the lowest layer node-llama-cpp has: the native context's initBatch / addToBatch /
//                      decodeBatch / sampleToken, one sampler, nothing else in JavaScript. It reads
//                      node-llama-cpp internals (pinned version), so it is a measurement, not product code.
//
// For the addon loop it also splits a token's time into the decode promise, the sample promise and the
// rest, to show what is left once llama.cpp has done its work: two thread hops per token (decode, then
// sample), which llama-server, sampling on its decode thread, does not make.
//
// Usage: node bench/per-token-floor.mjs [--model bench|tiny|/path.gguf] [--tokens N] [--rounds N]
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { Children, stopChildrenOnSignal } from './lib/processes.mjs';
import { startLlamaServer } from './lib/llama-server.mjs';
import { pct, sleep, table } from './lib/stats.mjs';
import { ensureLlamaServer } from '../scripts/llama-server-build.mjs';
import { rerunWithWorkerThreadpool } from './lib/threadpool.mjs';

/** @import { LlamaContext } from 'node-llama-cpp' */
/** @import { GenerateRequest } from '../libs/engine/src/index.js' */
/** @import { NativeContext, NativeSampler } from '../libs/engine/src/llama-cpp/native-context.js' */
/** @import { DistModules } from './lib/dist.mjs' */
/**
 * The node-llama-cpp internals the addon loop drives (the pinned version has them; the engine's
 * native-context.ts describes and checks the same layer).
 * @typedef {NativeContext & { setThreads(threads: number): void, disposeSequence(sequenceId: number): void }} AddonContext
 * @typedef {{ _ctx: AddonContext }} ContextInternals
 * @typedef {{ _sequenceId: number }} SequenceInternals
 * @typedef {{ _bindings: { AddonSampler: new (model: unknown) => NativeSampler } }} LlamaInternals
 * @typedef {{ _model: unknown }} ModelInternals
 */

rerunWithWorkerThreadpool();

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = resolve(ROOT, 'dist');
const PROMPT = 'Write a long story about a lighthouse keeper and a storm.';
const USAGE = 'Usage: node bench/per-token-floor.mjs [--model bench|tiny|/path.gguf] [--tokens N] [--rounds N]';
const opts = parseCli(USAGE, {
  model: { type: 'string', default: 'bench' },
  tokens: { type: 'string', default: '128' },
  rounds: { type: 'string', default: '8' },
});
const TOKENS = positiveInt('--tokens', opts.tokens);
const ROUNDS = positiveInt('--rounds', opts.rounds);
const CONTEXT_SIZE = 1024;
const PARALLEL = 8;

/**
 * @template {keyof DistModules} P
 * @param {P} path
 * @returns {Promise<DistModules[P]>}
 */
const importDist = (path) => import(pathToFileURL(resolve(DIST, path)).href);
/** @param {number[]} values */
const median = (values) => pct(values, 50);

async function modelPath() {
  const { ensurePresetModel, isModelPresetName } = await importDist('libs/gguf/src/index.js');
  if (isModelPresetName(opts.model)) return ensurePresetModel(opts.model, resolve(ROOT, 'models'));
  const path = resolve(opts.model);
  if (!path.toLowerCase().endsWith('.gguf') || !existsSync(path))
    throw new Error(`--model must be tiny, bench or an existing .gguf file (got "${opts.model}")`);
  return path;
}

/**
 * Mean ms between consecutive token timestamps (the prompt's evaluation is left out).
 * @param {number[]} stamps
 */
const perToken = (stamps) => (stamps[stamps.length - 1] - stamps[0]) / (stamps.length - 1);

/**
 * The native context's own methods, timed: what a promise took from call to settlement.
 * @param {LlamaContext} context
 */
function timeNativeCalls(context) {
  const native = /** @type {ContextInternals} */ (/** @type {unknown} */ (context))._ctx;
  /** @type {{ decode: number[], sample: number[] }} */
  const times = { decode: [], sample: [] };
  const timed =
    /**
     * @template {unknown[]} A
     * @template R
     * @param {(...args: A) => Promise<R>} fn
     * @param {number[]} into
     * @returns {(...args: A) => Promise<R>}
     */
    (fn, into) =>
      (...args) => {
        const started = performance.now();
        return fn.apply(native, args).then((value) => {
          into.push(performance.now() - started);
          return value;
        });
      };
  /** @type {Partial<Record<string | symbol, unknown>>} */
  const wrapped = {
    decodeBatch: timed(native.decodeBatch, times.decode),
    sampleToken: timed(native.sampleToken, times.sample),
  };
  return {
    native: new Proxy(native, {
      get: (target, key) => {
        const members = /** @type {Record<string | symbol, unknown>} */ (/** @type {unknown} */ (target));
        return wrapped[key] ?? (typeof members[key] === 'function' ? members[key].bind(target) : members[key]);
      },
    }),
    times,
  };
}

async function main() {
  const path = await modelPath();
  const { LlamaCppEngine } = await importDist('libs/engine/src/index.js');
  const engine = await LlamaCppEngine.load({
    modelPath: path,
    contextSize: CONTEXT_SIZE,
    parallel: PARALLEL,
    threads: 1,
    gpu: false,
  });
  /** @type {GenerateRequest} */
  const request = {
    messages: [{ role: 'user', content: PROMPT }],
    sampling: { temperature: 0, ignoreEos: true },
    maxTokens: TOKENS,
    stop: [],
  };

  // The addon loop runs on a context of its own, so it never shares a batch with the engine's.
  const { getLlama } = await import('node-llama-cpp');
  const llama = await getLlama({ build: 'never', gpu: false });
  const model = await llama.loadModel({ modelPath: path, defaultContextFlashAttention: 'auto' });
  const context = await model.createContext({ contextSize: CONTEXT_SIZE, sequences: PARALLEL, threads: 1 });
  const sequenceId = /** @type {SequenceInternals} */ (/** @type {unknown} */ (context.getSequence()))._sequenceId;
  const { native, times } = timeNativeCalls(context);
  native.setThreads(1);
  const promptTokens = model.tokenize(`<|im_start|>user\n${PROMPT}<|im_end|>\n<|im_start|>assistant\n`, true);

  async function addonLoop() {
    const { AddonSampler } = /** @type {LlamaInternals} */ (/** @type {unknown} */ (llama))._bindings;
    const sampler = new AddonSampler(/** @type {ModelInternals} */ (/** @type {unknown} */ (model))._model);
    sampler.applyConfig({ temperature: 0, minP: 0, topK: 0, topP: 1, seed: 1 });
    /** @type {number[]} */
    const stamps = [];
    const split = { decode: 0, sample: 0 };
    let position = 0;
    /** @type {number[]} */
    let input = promptTokens;
    for (let n = 0; n < TOKENS; n++) {
      native.initBatch(input.length);
      const [logitIndex] = native.addToBatch(
        sequenceId,
        position,
        Uint32Array.from(input),
        Uint32Array.of(input.length - 1),
      );
      await native.decodeBatch();
      position += input.length;
      const sampled = await native.sampleToken(logitIndex, sampler);
      stamps.push(performance.now());
      if (n > 0) {
        split.decode += times.decode[times.decode.length - 1];
        split.sample += times.sample[times.sample.length - 1];
      }
      input = [Array.isArray(sampled) ? sampled[0] : sampled];
    }
    native.disposeSequence(sequenceId);
    sampler.dispose();
    const steps = stamps.length - 1;
    return { ms: perToken(stamps), decode: split.decode / steps, sample: split.sample / steps };
  }

  async function conveyorEngine() {
    /** @type {number[]} */
    const stamps = [];
    await engine.generate(request, { onStart: () => undefined, onOutput: () => stamps.push(performance.now()) });
    return perToken(stamps);
  }

  const children = new Children(ROOT);
  stopChildrenOnSignal();
  const { base } = await startLlamaServer(children, {
    binary: ensureLlamaServer(),
    modelPath: path,
    threads: 1,
    sequences: PARALLEL,
    contextSize: CONTEXT_SIZE,
  });
  async function llamaServer() {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({
        messages: [{ role: 'user', content: PROMPT }],
        max_tokens: TOKENS,
        temperature: 0,
        ignore_eos: true,
        cache_prompt: false,
      }),
    });
    const reply = /** @type {{ timings: { predicted_per_token_ms: number } }} */ (await res.json());
    return reply.timings.predicted_per_token_ms;
  }

  console.log(
    `# Per-token floor, one stream, 1 thread: ${path}, ${TOKENS} tokens, ${ROUNDS} rounds after a warm-up, taking turns\n`,
  );
  /** @type {Record<'server' | 'engine' | 'addon' | 'decode' | 'sample', number[]>} */
  const rows = { server: [], engine: [], addon: [], decode: [], sample: [] };
  for (let round = 0; round <= ROUNDS; round++) {
    const server = await llamaServer();
    await sleep(100);
    const ours = await conveyorEngine();
    await sleep(100);
    const addon = await addonLoop();
    await sleep(100);
    if (round === 0) continue;
    rows.server.push(server);
    rows.engine.push(ours);
    rows.addon.push(addon.ms);
    rows.decode.push(addon.decode);
    rows.sample.push(addon.sample);
    console.log(
      `  round ${round}: llama-server ${server.toFixed(3)} ms, Conveyor engine ${ours.toFixed(3)} ms, addon loop ${addon.ms.toFixed(3)} ms per token`,
    );
  }
  /** @param {number[]} mine */
  const ratio = (mine) => median(rows.server.map((s, i) => s / mine[i]));
  console.log(
    `\n${table(
      ['per token (median of rounds)', 'ms', 'llama-server ÷ this (median of per-round ratios)'],
      [
        ['llama-server (its own timings)', median(rows.server).toFixed(3), '1.00×'],
        ['Conveyor engine, in process', median(rows.engine).toFixed(3), `${ratio(rows.engine).toFixed(2)}×`],
        ['node-llama-cpp addon loop', median(rows.addon).toFixed(3), `${ratio(rows.addon).toFixed(2)}×`],
      ],
    )}`,
  );
  const rest = median(rows.addon) - median(rows.decode) - median(rows.sample);
  console.log(
    `\naddon loop, one token: decode promise ${median(rows.decode).toFixed(3)} ms, sample promise ${median(rows.sample).toFixed(3)} ms, ` +
      `the rest (JavaScript between them) ${rest.toFixed(3)} ms`,
  );
  await children.stopAll();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
