import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type {
  LlamaContext,
  LlamaContextSequence,
  LlamaGrammarEvaluationState,
  LlamaModel,
  Token,
  TokenBias,
} from 'node-llama-cpp';
import type { SamplingOptions } from './llama-options.js';

/**
 * The layer of node-llama-cpp below `LlamaContextSequence.evaluate`: its native context and
 * sampler. `evaluate` spends ~0.3-0.5 ms of JavaScript per token on locks, a generator and batch
 * bookkeeping, ~10% of a token of a small model on a CPU thread (bench/per-token-floor.mjs). These
 * members are internal to node-llama-cpp, which is pinned; `assertNativeLayer` checks for them at
 * load, so a version without them fails at start-up, never mid-request.
 */
export interface NativeContext {
  initBatch(size: number): void;
  /** Returns the batch positions of the logits asked for, in `logitIndexes` order. */
  addToBatch(sequenceId: number, firstPosition: number, tokens: Uint32Array, logitIndexes: Uint32Array): Uint32Array;
  decodeBatch(): Promise<void>;
  /** `[token, probabilities as token/probability pairs, confidence]` when probabilities are asked for. */
  /** Drops the sequence's cells at positions `start` to `end` (end -1: to the last). */
  removeTokenCellsFromSequence(sequenceId: number, start: number, end: number): boolean;
  /** The lowest and highest positions a sequence's cells hold; -1 when it holds none. */
  getSequenceKvCacheMinPosition(sequenceId: number): number;
  getSequenceKvCacheMaxPosition(sequenceId: number): number;
  /** Makes `target`'s cells a copy of `source`'s, all of them (llama.cpp copies the whole KV buffer). */
  copySequenceStateFromOtherSequence(target: number, source: number): Promise<number>;
  /**
   * Writes a sequence's cells, with the tokens they hold, to a file (llama.cpp's `llama_state_seq_save_file`);
   * resolves to the file's size in bytes. The only way node-llama-cpp offers to take a sequence's whole
   * state out of the context: its in-memory checkpoints save only the sliding-window part of an iSWA cache.
   */
  saveSequenceStateToFile(filePath: string, sequenceId: number, tokens: Uint32Array): Promise<number>;
  /** Replaces a sequence's cells with a saved state; resolves to the tokens it holds. */
  loadSequenceStateFromFile(filePath: string, sequenceId: number, maxContextSize: number): Promise<Uint32Array>;
  sampleToken(
    logitIndex: number,
    sampler: NativeSampler,
    probabilities?: boolean,
    confidence?: boolean,
  ): Promise<number | [number, number[] | undefined, number | undefined]>;
}

export interface NativeSampler {
  applyConfig(config: Record<string, unknown>): void;
  dispose(): void;
}

interface Internals {
  context: { _ctx?: NativeContext };
  model: { _model?: unknown; _llama?: { _bindings?: { AddonSampler?: new (model: unknown) => NativeSampler } } };
  sequence: { _sequenceId?: unknown };
  bias: { _biases?: Map<Token, number> };
  grammar: { _state?: unknown };
}

export function nativeContext(context: LlamaContext): NativeContext {
  const native = (context as unknown as Internals['context'])._ctx;
  if (
    !native ||
    typeof native.removeTokenCellsFromSequence !== 'function' ||
    typeof native.copySequenceStateFromOtherSequence !== 'function' ||
    typeof native.saveSequenceStateToFile !== 'function' ||
    typeof native.loadSequenceStateFromFile !== 'function' ||
    typeof native.decodeBatch !== 'function' ||
    typeof native.sampleToken !== 'function' ||
    typeof native.addToBatch !== 'function' ||
    typeof native.getSequenceKvCacheMinPosition !== 'function' ||
    typeof native.getSequenceKvCacheMaxPosition !== 'function'
  ) {
    throw new Error(
      'This node-llama-cpp version has no native context layer (LlamaContext._ctx) that Conveyor can drive; install the pinned version.',
    );
  }
  return native;
}

export function nativeSampler(model: LlamaModel): NativeSampler {
  const internals = model as unknown as Internals['model'];
  const Sampler = internals._llama?._bindings?.AddonSampler;
  if (!Sampler || !internals._model)
    throw new Error(
      'This node-llama-cpp version has no native sampler (AddonSampler) that Conveyor can drive; install the pinned version.',
    );
  return new Sampler(internals._model);
}

/**
 * The node-llama-cpp release this seam was written against: every reach past its typings (the native
 * context and sampler, a sequence's id, a bias's map, a grammar's state) is here, as that release has
 * them. package.json pins it exactly, and `checkNodeLlamaCppSeam` refuses any other at start-up, as the
 * BullMQ seam does its own.
 */
export const SEAM_NODE_LLAMA_CPP_VERSION = '3.22.1';

/**
 * The version of node-llama-cpp this process loads: its package.json, found as Node finds the package
 * (the nearest node_modules up from here), since the package exports no path to it.
 */
export function installedNodeLlamaCppVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const manifest = join(dir, 'node_modules', 'node-llama-cpp', 'package.json');
    if (existsSync(manifest)) return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
    if (dirname(dir) === dir) throw new Error('node-llama-cpp is not installed');
  }
}

/** Why this process must not run with the node-llama-cpp it loads, in one line, or null when it may. */
export function checkNodeLlamaCppSeam(installed = installedNodeLlamaCppVersion()): string | null {
  if (installed === SEAM_NODE_LLAMA_CPP_VERSION) return null;
  return (
    `node-llama-cpp ${installed} is installed, but the engine was written for node-llama-cpp ${SEAM_NODE_LLAMA_CPP_VERSION} ` +
    `(libs/engine/src/llama-cpp/native-context.ts reads its internals): install ${SEAM_NODE_LLAMA_CPP_VERSION}, or port the seam first.`
  );
}

/**
 * A token bias's map of token → logit offset. TokenBias.set() skips end-of-generation tokens, which a
 * bias that holds a reply open must reach, so entries go into the map itself.
 */
export function tokenBiasMap(bias: TokenBias): Map<Token, number> {
  const biases = (bias as unknown as Internals['bias'])._biases;
  if (!(biases instanceof Map)) throw new Error('This node-llama-cpp version keeps token biases differently');
  return biases;
}

/** Fails fast at load when node-llama-cpp lacks what the engine drives directly. */
export function assertNativeLayer(model: LlamaModel, context: LlamaContext): void {
  nativeContext(context);
  nativeSampler(model).dispose();
}

export function sequenceId(sequence: LlamaContextSequence): number {
  const id = (sequence as unknown as Internals['sequence'])._sequenceId;
  if (typeof id !== 'number')
    throw new Error('This node-llama-cpp version does not expose a sequence id (LlamaContextSequence._sequenceId).');
  return id;
}

/** node-llama-cpp's default when a request sets no penalty window. */
const MAX_PUNISH_TOKENS = 64;

/**
 * The native sampler's configuration for one token, as node-llama-cpp builds it for `evaluate`
 * (same defaults, same fields), so replies do not depend on which layer drove the sampler.
 */
export function samplerConfig(
  options: SamplingOptions,
  grammar: LlamaGrammarEvaluationState | undefined,
  bias: TokenBias | undefined,
): Record<string, unknown> {
  const { temperature = 0, minP = 0, topK = 40, topP = 0.95, seed, repeatPenalty } = options;
  const penalty = repeatPenalty || undefined;
  const punish = penalty
    ? typeof penalty.punishTokens === 'function'
      ? penalty.punishTokens()
      : penalty.punishTokens
    : undefined;
  const config: Record<string, unknown> = {
    temperature,
    minP,
    topK,
    topP,
    seed: Math.max(0, Number.isFinite(seed) ? Math.floor(seed as number) : Math.floor(Date.now() / 1000)),
    repeatPenaltyMaxTokens: Math.max(penalty?.maxPunishTokens ?? MAX_PUNISH_TOKENS, punish?.length ?? 0),
    dryRepeatPenaltyBase: 1.75,
    dryRepeatPenaltyAllowedLength: 2,
    dryRepeatPenaltyLastTokens: -1,
    dryRepeatPenaltySequenceBreakers: DRY_BREAKERS,
  };
  if (penalty) {
    config.repeatPenalty = penalty.penalty;
    if (punish) config.repeatPenaltyTokens = Uint32Array.from(punish);
    if (penalty.presencePenalty !== undefined) config.repeatPenaltyPresencePenalty = penalty.presencePenalty;
    if (penalty.frequencyPenalty !== undefined) config.repeatPenaltyFrequencyPenalty = penalty.frequencyPenalty;
  }
  const biases = bias ? (bias as unknown as Internals['bias'])._biases : undefined;
  if (biases?.size) {
    config.tokenBiasKeys = Uint32Array.from(biases.keys());
    config.tokenBiasValues = Float32Array.from(biases.values());
  }
  const state = grammar ? (grammar as unknown as Internals['grammar'])._state : undefined;
  if (state) config.grammarEvaluationState = state;
  // The native side reads a key that is present as a value of its type: an undefined one must go.
  for (const key of Object.keys(config)) if (config[key] === undefined) delete config[key];
  return config;
}

// One array for every config: the native sampler rebuilds its DRY stage whenever it is handed a new one.
const DRY_BREAKERS = ['\n', ':', '"', '*'];

/** Probabilities as node-llama-cpp returns them (flat token/probability pairs), highest first. */
export function probabilityMap(pairs: number[] | undefined): Map<Token, number> | undefined {
  if (!pairs) return undefined;
  const map = new Map<Token, number>();
  for (let i = 1; i < pairs.length; i += 2) map.set(pairs[i - 1] as Token, pairs[i]!);
  return map;
}
