import { GgmlType } from './gguf-writer.js';

export interface ModelPreset {
  name: string;
  vocabSize: number;
  embedding: number;
  layers: number;
  heads: number;
  kvHeads: number;
  feedForward: number;
  contextLength: number;
  weightType: GgmlType.F16 | GgmlType.Q8_0;
  /** Reuse the token embeddings as the output projection (no output.weight), as many small models do. */
  tiedOutput: boolean;
  seed: number;
  /** A thinking model: its template opens `<think>` for each reply, and `<think>`/`</think>` are tokens. */
  thinking?: boolean;
}

/**
 * `think` is `tiny` with a thinking template. `tiny` is small enough for every test and the default start to load it in
 * well under a second; `bench` (~42 M parameters, 32k vocabulary) is sized like
 * the models throughput is compared on.
 */
const TINY = {
  name: 'conveyor-tiny',
  vocabSize: 2048,
  embedding: 128,
  layers: 4,
  heads: 4,
  kvHeads: 2,
  feedForward: 352,
  contextLength: 8192,
  weightType: GgmlType.F16,
  tiedOutput: false,
  seed: 1,
} as const satisfies ModelPreset;

export const MODEL_PRESETS = {
  tiny: TINY,
  /** `tiny` with a thinking template, for reasoning parsers. */
  think: { ...TINY, name: 'conveyor-tiny-think', thinking: true },
  bench: {
    name: 'conveyor-bench',
    vocabSize: 32000,
    embedding: 512,
    layers: 8,
    heads: 8,
    kvHeads: 8,
    feedForward: 1408,
    contextLength: 8192,
    weightType: GgmlType.Q8_0,
    tiedOutput: true,
    seed: 2,
  },
} as const satisfies Record<string, ModelPreset>;

export type ModelPresetName = keyof typeof MODEL_PRESETS;

export function isModelPresetName(name: string): name is ModelPresetName {
  return Object.hasOwn(MODEL_PRESETS, name);
}
