export type {
  GenerationEngine,
  GenerateCallbacks,
  GenerateRequest,
  GenerateResult,
  GenerationInput,
  OutputPiece,
} from './generation-engine.js';
export { EngineInputError } from './generation-engine.js';
export { toChatHistory, toSamplingOptions } from './llama-options.js';
export { GpuUnavailableError, LlamaCppEngine, type LlamaCppEngineOptions } from './llama-cpp.engine.js';
export { resolveModelSource } from './model-source.js';
export { LlamaEmbeddingEngine, type EmbedResult, type LlamaEmbeddingEngineOptions } from './llama-embedding.engine.js';
export { ImageSource } from './image-source.port.js';
export { OpenAiUpstreamEngine, type OpenAiUpstreamEngineOptions } from './openai-upstream.engine.js';
export { UpstreamError, type UpstreamDialect } from './openai-wire.js';
export { LlamaServerEngine, type EngineLogger, type LlamaServerEngineOptions } from './llama-server.engine.js';
export { findLlamaServer, cachedLlamaServerPath, LlamaServerMissingError } from './llama-server-binary.js';
