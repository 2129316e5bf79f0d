import { Logger } from '@nestjs/common';
import type { DeploymentConfig, PlatformConfig } from '@conveyor/config';
import { LlamaCppEngine, LlamaEmbeddingEngine, resolveModelSource, type ChatEngine } from '@conveyor/engine';

const logger = new Logger('Engine');

/** The engines of the deployments this worker serves, loaded and warmed up before any job is taken. */
export class EngineRegistry {
  private constructor(
    private readonly engines: Map<string, ChatEngine>,
    private readonly embedders: Map<string, LlamaEmbeddingEngine>,
  ) {}

  static async load(config: PlatformConfig, deployments: readonly DeploymentConfig[]): Promise<EngineRegistry> {
    const engines = new Map<string, ChatEngine>();
    const embedders = new Map<string, LlamaEmbeddingEngine>();
    try {
      for (const d of deployments) {
        if (d.task === 'embeddings') embedders.set(d.id, await loadEmbedder(d, config));
        else engines.set(d.id, await loadEngine(d, config));
      }
    } catch (err) {
      await Promise.allSettled([...engines.values(), ...embedders.values()].map((e) => e.dispose()));
      throw err;
    }
    return new EngineRegistry(engines, embedders);
  }

  get(deployment: string): ChatEngine | undefined {
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

/** Loads a model, then runs one short generation so the first request is not a cold one. */
async function loadEngine(deployment: DeploymentConfig, config: PlatformConfig): Promise<ChatEngine> {
  const started = Date.now();
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
  });
  await engine.generate(
    { messages: [{ role: 'user', content: 'warm-up' }], sampling: { temperature: 0 }, maxTokens: 1, stop: [] },
    { onStart: () => undefined, onOutput: () => undefined },
  );
  logger.log(
    `Loaded ${modelPath} for "${deployment.id}" (${deployment.pool} pool) in ${Date.now() - started} ms ` +
      `(context ${deployment.contextSize} x ${deployment.parallel} sequences, ${deployment.threads} thread(s), flash attention ${deployment.flashAttention})`,
  );
  return engine;
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
