/**
 * The OpenTelemetry GenAI semantic conventions' attribute names the generation spans carry. They are
 * still "development" in the conventions (only in the package's incubating entry point, which may
 * change between releases), so the names the platform relies on are spelled once here.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  requestTopP: 'gen_ai.request.top_p',
  requestTopK: 'gen_ai.request.top_k',
  requestPresencePenalty: 'gen_ai.request.presence_penalty',
  requestFrequencyPenalty: 'gen_ai.request.frequency_penalty',
  requestSeed: 'gen_ai.request.seed',
  requestStopSequences: 'gen_ai.request.stop_sequences',
  requestChoiceCount: 'gen_ai.request.choice.count',
  responseId: 'gen_ai.response.id',
  responseModel: 'gen_ai.response.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  responseTimeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
} as const;

/** `gen_ai.operation.name`: the conventions' well-known values for the two kinds of generation. */
export type GenAiOperation = 'chat' | 'text_completion';
