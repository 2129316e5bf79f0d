import { Logger } from '@nestjs/common';
import type { DeploymentConfig, PlatformConfig } from '@conveyor/config';
import {
  findLlamaServer,
  LlamaCppEngine,
  LlamaEmbeddingEngine,
  LlamaServerEngine,
  OpenAiUpstreamEngine,
  resolveModelSource,
  type GenerationEngine,
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
        else engines.set(d.id, await loadEngine(d, config, d.vision ? images : null));
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

  /** The embedding engine of a deployment with `task: embeddings`. */
  embedder(deployment: string): LlamaEmbeddingEngine | undefined {
    return this.embedders.get(deployment);
  }

  async dispose(): Promise<void> {
    await Promise.allSettled([...this.engines.values(), ...this.embedders.values()].map((e) => e.dispose()));
  }
}

/**
 * Starts a deployment's engine (its `engine.kind` picks which), then runs one short generation through it
 * so the first request is not a cold one, and an upstream that does not answer stops the worker's start.
 */
async function loadEngine(
  deployment: DeploymentConfig,
  config: PlatformConfig,
  images: ImageSource | null,
): Promise<GenerationEngine> {
  const started = Date.now();
  const { engine, describe } = await startEngine(deployment, config, images);
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

async function startEngine(
  deployment: DeploymentConfig,
  config: PlatformConfig,
  images: ImageSource | null,
): Promise<{ engine: GenerationEngine; describe: string }> {
  const { engine: kind } = deployment;
  const running = `(context ${deployment.contextSize} x ${deployment.parallel} sequences, ${deployment.threads} thread(s), flash attention ${deployment.flashAttention}`;
  if (kind.kind === 'openai') {
    const model = kind.model ?? deployment.model;
    const engine = new OpenAiUpstreamEngine({
      url: kind.url,
      apiKey: kind.apiKey,
      model,
      images,
      name: `The upstream of "${deployment.id}" (${kind.url})`,
    });
    return {
      engine,
      describe: `${model} at ${kind.url} (an OpenAI-compatible upstream${images ? ', with images' : ''})`,
    };
  }
  if (kind.kind === 'llama-server') {
    // Found before anything is downloaded or generated: without a binary there is nothing to start.
    let binary: string;
    try {
      binary = await findLlamaServer(config.worker.llamaServerBin, config.worker.llamaServerCache);
    } catch (err) {
      throw new Error(`Deployment "${deployment.id}" runs on llama-server: ${(err as Error).message}`, { cause: err });
    }
    const modelPath = await resolveModelSource(deployment.model, config.modelsDir, logger);
    const mmprojPath = kind.mmproj ? await resolveModelSource(kind.mmproj, config.modelsDir, logger) : null;
    const engine = await LlamaServerEngine.start({
      binary,
      modelPath,
      mmprojPath,
      imageMaxTokens: kind.imageMaxTokens,
      contextSize: deployment.contextSize,
      parallel: deployment.parallel,
      threads: deployment.threads,
      flashAttention: deployment.flashAttention,
      gpu: deployment.pool === 'gpu',
      reasoningParser: deployment.reasoningParser,
      images,
      logger: new Logger(`llama-server ${deployment.id}`),
    });
    return {
      engine,
      describe: `${modelPath}${mmprojPath ? ` with projector ${mmprojPath}` : ''} in llama-server ${binary} (pid ${engine.pid}) ${running})`,
    };
  }
  const modelPath = await resolveModelSource(deployment.model, config.modelsDir, logger);
  const engine = await LlamaCppEngine.load({
    modelPath,
    contextSize: deployment.contextSize,
    parallel: deployment.parallel,
    threads: deployment.threads,
    flashAttention: deployment.flashAttention,
    gpu: deployment.pool === 'gpu',
    allowCpuFallback: config.worker.allowCpuFallback,
    reasoningParser: deployment.reasoningParser,
    promptCache: deployment.promptCache,
  });
  return { engine, describe: `${modelPath} ${running}, prompt cache ${deployment.promptCache})` };
}

/** Loads an embeddings deployment's model in an embedding context, then embeds one short input so the first request is not a cold one. */
async function loadEmbedder(deployment: DeploymentConfig, config: PlatformConfig): Promise<LlamaEmbeddingEngine> {
  const started = Date.now();
  const modelPath = await resolveModelSource(deployment.model, config.modelsDir, logger);
  const engine = await LlamaEmbeddingEngine.load({
    modelPath,
    contextSize: deployment.contextSize,
    threads: deployment.threads,
    flashAttention: deployment.flashAttention,
    gpu: deployment.pool === 'gpu',
    allowCpuFallback: config.worker.allowCpuFallback,
  });
  await engine.embed(['warm-up']);
  logger.log(
    `Loaded ${modelPath} for embeddings "${deployment.id}" (${deployment.pool} pool) in ${Date.now() - started} ms ` +
      `(context ${deployment.contextSize}, ${engine.dimensions} dimensions, ${deployment.threads} thread(s))`,
  );
  return engine;
}
