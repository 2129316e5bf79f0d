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
  /** A vision model: the projector (mmproj) generated beside it, which turns images into its embeddings. */
  projector?: ProjectorPreset;
  /** A reranker: a Qwen3 model with a one-logit rank head (`cls.output`), for `task: rerank`. */
  reranker?: boolean;
}

/**
 * A LLaVA-style vision projector (`clip.projector_type` `mlp`): a small ViT over square images cut into
 * patches, then a two-layer MLP into the text model's embedding width. Random weights, like the models.
 */
export interface ProjectorPreset {
  /** Images are resized to this square before they are cut into patches. */
  imageSize: number;
  patchSize: number;
  embedding: number;
  feedForward: number;
  /** Width of the MLP's hidden layer. */
  projection: number;
  heads: number;
  layers: number;
  seed: number;
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
  /**
   * `tiny` with a vision projector: 32x32 images in 8x8 patches, so an image is 16 tokens of the prompt.
   * Served by llama.cpp's server (node-llama-cpp runs no projector).
   */
  vision: {
    ...TINY,
    name: 'conveyor-tiny-vision',
    projector: {
      imageSize: 32,
      patchSize: 8,
      embedding: 64,
      feedForward: 96,
      projection: 128,
      heads: 4,
      layers: 2,
      seed: 3,
    },
  },
  /** `tiny` as a reranker (Qwen3 with a rank head), for `task: rerank` deployments. */
  rerank: { ...TINY, name: 'conveyor-tiny-rerank', reranker: true, seed: 4 },
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
