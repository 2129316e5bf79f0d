export type { ChatEngine, GenerateCallbacks, GenerateRequest, GenerateResult, OutputPiece } from './chat-engine.js';
export { EngineInputError } from './chat-engine.js';
export { toChatHistory, toSamplingOptions } from './llama-options.js';
export { GpuUnavailableError, LlamaCppEngine, type LlamaCppEngineOptions } from './llama-cpp.engine.js';
export { resolveModelSource } from './model-source.js';
export { LlamaEmbeddingEngine, type EmbedResult, type LlamaEmbeddingEngineOptions } from './llama-embedding.engine.js';
