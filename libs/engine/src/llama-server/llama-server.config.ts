import type { DeploymentOf, EngineHost } from '../core/engine-factory.js';
import type { LlamaServerEngineOptions } from './llama-server.options.js';

/** What was found for a llama-server deployment before it starts: the binary and its model files. */
export interface LlamaServerFiles {
  binary: string;
  modelPath: string;
  /** The vision projector's GGUF; null: text only. */
  mmprojPath: string | null;
}

/** The llama-server child's options, from a deployment's config and the host's. */
export function llamaServerOptions(
  deployment: DeploymentOf<'llama-server'>,
  host: Pick<EngineHost, 'images' | 'logger'>,
  files: LlamaServerFiles,
): LlamaServerEngineOptions {
  return {
    ...files,
    deployment: deployment.id,
    imageMaxTokens: deployment.engine.imageMaxTokens,
    contextSize: deployment.contextSize,
    parallel: deployment.parallel,
    threads: deployment.threads,
    flashAttention: deployment.flashAttention,
    gpu: deployment.pool === 'gpu',
    reasoningParser: deployment.reasoningParser,
    images: host.images,
    logger: host.logger(`llama-server ${deployment.id}`),
  };
}
