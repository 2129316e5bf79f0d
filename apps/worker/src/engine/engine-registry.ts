import { Logger } from '@nestjs/common';
import type { DeploymentConfig, PlatformConfig } from '@conveyor/config';
import {
  LlamaEmbeddingEngine,
  llamaEmbeddingOptions,
  resolveModelSource,
  startEngine,
  type EngineHost,
  type GenerationEngine,
  type HeldPromptChange,
  type ImageSource,
} from '@conveyor/engine';

const logger = new Logger('Engine');

/** The engines of the deployments this worker serves, loaded and warmed up before any job is taken. */
export class EngineRegistry {
  /** Engines already loaded, by deployment; `load` loads them from config. */
  constructor(
    private readonly engines: Map<string, GenerationEngine>,
    private readonly embedders: Map<string, LlamaEmbeddingEngine>,
  ) {}

  /** `images`: where the engines of deployments that take images read them from. */
  static async load(
    config: PlatformConfig,
    deployments: readonly DeploymentConfig[],
    images: ImageSource,
  ): Promise<EngineRegistry> {
    const engines = new Map<string, GenerationEngine>();
    const embedders = new Map<string, LlamaEmbeddingEngine>();
    try {
      for (const d of deployments) {
        if (d.task === 'embeddings') embedders.set(d.id, await loadEmbedder(d, config));
        else engines.set(d.id, await loadEngine(d, engineHost(config, d.vision ? images : null)));
      }
    } catch (err) {
      await Promise.allSettled([...engines.values(), ...embedders.values()].map((e) => e.dispose()));
      throw err;
    }
    return new EngineRegistry(engines, embedders);
  }

  get(deployment: string): GenerationEngine | undefined {
    return this.engines.get(deployment);
  }

  /** `listener` runs after each round of any engine that decodes in rounds. */
  onRound(listener: () => void): void {
    for (const engine of this.engines.values()) engine.onRound?.(listener);
  }

  /** `listener` hears, by deployment, of the prompts an engine keeps beyond its sequences (see HeldPromptChange). */
  onHeldPrompts(listener: (deployment: string, change: HeldPromptChange) => void): void {
    for (const [deployment, engine] of this.engines) engine.onHeldPrompts?.((change) => listener(deployment, change));
  }

  /** The embedding engine of a deployment with `task: embeddings`. */
  embedder(deployment: string): LlamaEmbeddingEngine | undefined {
    return this.embedders.get(deployment);
  }

  async dispose(): Promise<void> {
    await Promise.allSettled([...this.engines.values(), ...this.embedders.values()].map((e) => e.dispose()));
  }
}

/** What the platform's config gives a deployment's engine; `images`: null when the deployment takes none. */
function engineHost(config: PlatformConfig, images: ImageSource | null): EngineHost {
  return {
    modelsDir: config.modelsDir,
    llamaServerBin: config.worker.llamaServerBin,
    llamaServerCache: config.worker.llamaServerCache,
    allowCpuFallback: config.worker.allowCpuFallback,
    images,
    log: logger,
    logger: (name) => new Logger(name),
  };
}

/**
 * Starts a deployment's engine (its `engine.kind` picks which), then runs one short generation through it
 * so the first request is not a cold one, and an upstream that does not answer stops the worker's start.
 */
async function loadEngine(deployment: DeploymentConfig, host: EngineHost): Promise<GenerationEngine> {
  const started = Date.now();
  const { engine, describe } = await startEngine(deployment, host);
  try {
    await engine.generate(
      { messages: [{ role: 'user', content: 'warm-up' }], sampling: { temperature: 0 }, maxTokens: 1, stop: [] },
      { onStart: () => undefined, onOutput: () => undefined },
    );
  } catch (err) {
    await engine.dispose();
    throw new Error(`The warm-up generation of "${deployment.id}" failed: ${(err as Error).message}`, { cause: err });
  }
  logger.log(`Loaded ${describe} for "${deployment.id}" (${deployment.pool} pool) in ${Date.now() - started} ms`);
  return engine;
}

/** Loads an embeddings deployment's model in an embedding context, then embeds one short input so the first request is not a cold one. */
async function loadEmbedder(deployment: DeploymentConfig, config: PlatformConfig): Promise<LlamaEmbeddingEngine> {
  const started = Date.now();
  const modelPath = await resolveModelSource(deployment.model, config.modelsDir, logger);
  const engine = await LlamaEmbeddingEngine.load(llamaEmbeddingOptions(deployment, config.worker, modelPath));
  await engine.embed(['warm-up']);
  logger.log(
    `Loaded ${modelPath} for embeddings "${deployment.id}" (${deployment.pool} pool) in ${Date.now() - started} ms ` +
      `(context ${deployment.contextSize}, ${engine.dimensions} dimensions, ${deployment.threads} thread(s))`,
  );
  return engine;
}
