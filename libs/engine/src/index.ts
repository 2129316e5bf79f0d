export type {
  EngineTokenizer,
  GenerationEngine,
  GenerateCallbacks,
  GenerateRequest,
  GenerateResult,
  GenerationInput,
  HeldPromptChange,
  OutputPiece,
} from './core/generation-engine.js';
export { EngineInputError, EngineOutputError } from './core/generation-engine.js';
export { toChatHistory, toSamplingOptions } from './llama-cpp/llama-options.js';
export { LlamaRankingEngine, type RankResult } from './llama-cpp/llama-ranking.engine.js';
export { LlamaCppEngine, type LlamaCppEngineOptions } from './llama-cpp/llama-cpp.engine.js';
export { GpuUnavailableError } from './llama-cpp/llama-runtime.js';
export { resolveModelSource } from './core/model-source.js';
export { estimateModelMemoryMb } from './core/model-memory.js';
export {
  LlamaEmbeddingEngine,
  type EmbedResult,
  type LlamaEmbeddingEngineOptions,
} from './llama-cpp/llama-embedding.engine.js';
export { ImageSource } from './core/image-source.port.js';
export { engineMetrics, modelLoads, modelMemoryHeld } from './core/engine-metrics.js';
export { OpenAiUpstreamEngine, type OpenAiUpstreamEngineOptions } from './openai-upstream/openai-upstream.engine.js';
export { UpstreamError } from './openai-upstream/upstream-error.js';
export type { UpstreamDialect } from './openai-upstream/upstream-request-body.js';
export { SimulatedEngine, type SimulatedEngineOptions } from './simulated/simulated.engine.js';
export { LlamaServerEngine } from './llama-server/llama-server.engine.js';
export type { LlamaServerEngineOptions } from './llama-server/llama-server.options.js';
export { findLlamaServer, cachedLlamaServerPath, LlamaServerMissingError } from './llama-server/llama-server-binary.js';
export {
  describeContext,
  type DeploymentOf,
  type EngineFactory,
  type EngineHost,
  type EngineKind,
  type EngineLogger,
  type StartedEngine,
} from './core/engine-factory.js';
export { ENGINE_FACTORIES, startEngine } from './engines.js';
export { llamaCppOptions, llamaEmbeddingOptions } from './llama-cpp/llama-cpp.config.js';
export { SEAM_NODE_LLAMA_CPP_VERSION, checkNodeLlamaCppSeam } from './llama-cpp/native-context.js';
