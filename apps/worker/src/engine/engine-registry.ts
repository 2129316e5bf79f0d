import { Logger } from '@nestjs/common';
import type { DeploymentConfig, PlatformConfig } from '@conveyor/config';
import {
  LlamaEmbeddingEngine,
  LlamaRankingEngine,
  llamaEmbeddingOptions,
  resolveModelSource,
  startEngine,
  type EngineHost,
  type GenerationEngine,
  type HeldPromptChange,
  type ImageSource,
} from '@conveyor/engine';

const logger = new Logger('Engine');

/** When a model's load began and ended, in ms since the epoch. */
export interface ModelLoadTime {
  startedAt: number;
  endedAt: number;
}

/**
 * The engines of the deployments this worker holds: the pinned ones loaded and warmed up before any job
 * is taken, on-demand ones added and removed as OnDemandModels loads and unloads them.
 */
export class EngineRegistry {
  private readonly rankers = new Map<string, LlamaRankingEngine>();
  /** When each engine's load began and ended (ms): a request that waited for it sees it in its trace. */
  private readonly loads = new Map<string, ModelLoadTime>();
  private readonly roundListeners: (() => void)[] = [];
  private readonly heldListeners: ((deployment: string, change: HeldPromptChange) => void)[] = [];

  /** Engines already loaded, by deployment; `load` loads them from config. */
  constructor(
    private readonly engines: Map<string, GenerationEngine>,
    private readonly embedders: Map<string, LlamaEmbeddingEngine>,
    private readonly config?: PlatformConfig,
    private readonly images?: ImageSource,
  ) {}

  /** Loads the pinned deployments of `deployments`; `images`: where the engines of deployments that take images read them from. */
  static async load(
    config: PlatformConfig,
    deployments: readonly DeploymentConfig[],
    images: ImageSource,
  ): Promise<EngineRegistry> {
    const registry = new EngineRegistry(new Map(), new Map(), config, images);
    try {
      for (const d of deployments) if (d.load !== 'on-demand') await registry.add(d);
    } catch (err) {
      await registry.dispose();
      throw err;
    }
    return registry;
  }

  /** Loads and warms up a deployment's engine, which then takes the listeners already registered. */
  async add(d: DeploymentConfig): Promise<void> {
    const startedAt = Date.now();
    await this.load(d);
    this.loads.set(d.id, { startedAt, endedAt: Date.now() });
  }

  /** When the deployment's engine was loaded, if this registry loaded it. */
  loadOf(deployment: string): ModelLoadTime | undefined {
    return this.loads.get(deployment);
  }

  private async load(d: DeploymentConfig): Promise<void> {
    if (!this.config || !this.images) throw new Error('This registry was given its engines; it loads none.');
    if (d.task === 'embeddings') {
      this.embedders.set(d.id, await loadEmbedder(d, this.config));
      return;
    }
    if (d.task === 'rerank') {
      this.rankers.set(d.id, await loadRanker(d, this.config));
      return;
    }
    const engine = await loadEngine(d, engineHost(this.config, d.vision ? this.images : null));
    this.engines.set(d.id, engine);
    for (const listener of this.roundListeners) engine.onRound?.(listener);
    for (const listener of this.heldListeners) engine.onHeldPrompts?.((change) => listener(d.id, change));
  }

  /** Frees a deployment's engine: call once no job of it is in hand. */
  async remove(deployment: string): Promise<void> {
    const engine = this.engines.get(deployment) ?? this.embedders.get(deployment) ?? this.rankers.get(deployment);
    this.engines.delete(deployment);
    this.embedders.delete(deployment);
    this.rankers.delete(deployment);
    this.loads.delete(deployment);
    await engine?.dispose();
  }

  get(deployment: string): GenerationEngine | undefined {
    return this.engines.get(deployment);
  }

  /** `listener` runs after each round of any engine that decodes in rounds, loaded now or later. */
  onRound(listener: () => void): void {
    this.roundListeners.push(listener);
    for (const engine of this.engines.values()) engine.onRound?.(listener);
  }

  /** `listener` hears, by deployment, of the prompts an engine keeps beyond its sequences (see HeldPromptChange). */
  onHeldPrompts(listener: (deployment: string, change: HeldPromptChange) => void): void {
    this.heldListeners.push(listener);
    for (const [deployment, engine] of this.engines) engine.onHeldPrompts?.((change) => listener(deployment, change));
  }

  /** The embedding engine of a deployment with `task: embeddings`. */
  embedder(deployment: string): LlamaEmbeddingEngine | undefined {
    return this.embedders.get(deployment);
  }

  /** The ranking engine of a deployment with `task: rerank`. */
  ranker(deployment: string): LlamaRankingEngine | undefined {
    return this.rankers.get(deployment);
  }

  async dispose(): Promise<void> {
    const all = [...this.engines.values(), ...this.embedders.values(), ...this.rankers.values()];
    await Promise.allSettled(all.map((e) => e.dispose()));
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

/** Loads a rerank deployment's model in a ranking context, then scores one pair so the first request is not a cold one. */
async function loadRanker(deployment: DeploymentConfig, config: PlatformConfig): Promise<LlamaRankingEngine> {
  const started = Date.now();
  const modelPath = await resolveModelSource(deployment.model, config.modelsDir, logger);
  const engine = await LlamaRankingEngine.load(llamaEmbeddingOptions(deployment, config.worker, modelPath));
  await engine.rank('warm-up', ['warm-up']);
  logger.log(
    `Loaded ${modelPath} for reranking "${deployment.id}" (${deployment.pool} pool) in ${Date.now() - started} ms ` +
      `(context ${deployment.contextSize}, ${deployment.threads} thread(s))`,
  );
  return engine;
}
