import { freemem } from 'node:os';
import type { DeploymentConfig } from '@conveyor/config';
import type { EngineHost } from '../core/engine-factory.js';
import { hostCacheBudget } from './host-cache-index.js';
import type { LlamaCppEngineOptions } from './llama-cpp.engine.js';
import type { LlamaEmbeddingEngineOptions } from './llama-embedding.engine.js';

/** The in-process engine's options, from a deployment's config and the host's; `modelPath`: its model, resolved. */
export function llamaCppOptions(
  deployment: DeploymentConfig,
  host: Pick<EngineHost, 'allowCpuFallback' | 'log'>,
  modelPath: string,
): LlamaCppEngineOptions {
  return {
    modelPath,
    contextSize: deployment.contextSize,
    parallel: deployment.parallel,
    threads: deployment.threads,
    flashAttention: deployment.flashAttention,
    gpu: deployment.pool === 'gpu',
    allowCpuFallback: host.allowCpuFallback,
    reasoningParser: deployment.reasoningParser,
    promptCache: deployment.promptCache,
    promptCacheRam: hostCacheBudget(deployment.promptCacheRam, freemem()),
    deployment: deployment.id,
    log: host.log,
  };
}

/** An embeddings deployment's options (`task: embeddings`, which runs in process only). */
export function llamaEmbeddingOptions(
  deployment: DeploymentConfig,
  host: Pick<EngineHost, 'allowCpuFallback'>,
  modelPath: string,
): LlamaEmbeddingEngineOptions {
  return {
    modelPath,
    contextSize: deployment.contextSize,
    threads: deployment.threads,
    flashAttention: deployment.flashAttention,
    gpu: deployment.pool === 'gpu',
    allowCpuFallback: host.allowCpuFallback,
  };
}
