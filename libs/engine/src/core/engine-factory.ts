import type { DeploymentConfig, EngineConfig } from '@conveyor/config';
import type { GenerationEngine } from './generation-engine.js';
import type { ImageSource } from './image-source.port.js';

export interface EngineLogger {
  log(message: string): void;
  warn(message: string): void;
}

/** What the worker gives every engine besides the deployment's own config: the platform's settings and its logs. */
export interface EngineHost {
  /** Where presets are generated and `hf:` models downloaded. */
  modelsDir: string;
  /** The llama-server binary LLAMA_SERVER_BIN names; null: the one `npm run build:llama-server` cached. */
  llamaServerBin: string | null;
  /** Where `npm run build:llama-server` caches its build (CONVEYOR_BENCH_CACHE). */
  llamaServerCache: string;
  /** Run a gpu-pool deployment on the CPU when no GPU is usable, instead of refusing to start. */
  allowCpuFallback: boolean;
  /** Where the jobs' images are read from; null: the deployment takes no images. */
  images: ImageSource | null;
  /** Where loading says what it does (a preset generated, a model downloaded). */
  log: EngineLogger;
  /** A logger of its own for what an engine runs beside the worker (a child process), named `name`. */
  logger(name: string): EngineLogger;
}

/** An engine ready to generate, and the line the worker logs about it. */
export interface StartedEngine {
  engine: GenerationEngine;
  describe: string;
}

export type EngineKind = EngineConfig['kind'];

/** A deployment whose engine is of kind `K`. */
export type DeploymentOf<K extends EngineKind> = DeploymentConfig & { engine: Extract<EngineConfig, { kind: K }> };

/** Starts a deployment's engine of kind `K`: whatever it needs (a model file, a binary) is found or fetched first. */
export type EngineFactory<K extends EngineKind> = (
  deployment: DeploymentOf<K>,
  host: EngineHost,
) => Promise<StartedEngine>;

/** How a deployment's llama.cpp context runs, as the description of an engine says it. */
export function describeContext(deployment: DeploymentConfig): string {
  return (
    `context ${deployment.contextSize} x ${deployment.parallel} sequences, ${deployment.threads} thread(s), ` +
    `flash attention ${deployment.flashAttention}`
  );
}
