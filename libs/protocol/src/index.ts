// class-transformer's @Type reads decorator metadata: load the polyfill with the DTOs, not in each app.
import 'reflect-metadata';
export { ChatCompletionRequestDto, StreamOptionsDto, MAX_MESSAGES } from './chat-completion-request.dto.js';
export { checkSchema } from './schema-checks.js';
export { ChatMessageDto, CHAT_ROLES } from './chat-message.dto.js';
export { validateDto, type ValidationProblem, type Validated } from './validate-dto.js';
export {
  FunctionDefinitionDto,
  JsonSchemaFormatDto,
  ResponseFormatDto,
  ToolCallDto,
  ToolDto,
  FUNCTION_NAME,
} from './tools.dto.js';
export {
  CompletionRequestDto,
  PromptConstraint,
  MAX_PROMPTS,
  DEFAULT_COMPLETION_MAX_TOKENS,
} from './completion-request.dto.js';
export {
  EmbeddingRequestDto,
  EMBEDDING_ENCODING_FORMATS,
  MAX_EMBEDDING_INPUTS,
  embeddingInputs,
} from './embedding-request.dto.js';
export { MAX_RERANK_DOCUMENTS, RerankRequestDto } from './rerank-request.dto.js';
export { ScoreRequestDto } from './score-request.dto.js';
export { GenerationFieldsDto, MAX_TOKENS_LIMIT } from './generation-fields.dto.js';
export { DEFAULT_TEMPERATURE, SamplingFieldsDto, SamplingPresetDto } from './sampling-fields.dto.js';
export { RequestProblem } from './request-problem.js';
export { parseImageDataUri, base64DecodedBytes, type DecodedImage, type ImageLimits } from './image-data-uri.parser.js';
export type { DeploymentTraits, SamplingPreset } from './deployment-traits.js';
export { ResponseRequestDto, type ResponseToolChoiceValue } from './response-request.dto.js';
export { ResponseTextDto, ResponseTextFormatDto, ResponseReasoningDto } from './response-tools.dto.js';
export { describeInputProblem, inputItems, MAX_INPUT_ITEMS } from './response-input.js';
export {
  CUSTOM_INPUT,
  HOSTED_TOOL_TYPES,
  offeredTools,
  toolsByModelName,
  type OfferedTool,
} from './response-tool-list.js';
export { decodeReasoning, encodeReasoning } from './reasoning-content.js';
export { MessagesPromptDto } from './messages-prompt.dto.js';
export { MessagesRequestDto } from './messages-request.dto.js';
export {
  MessageParamDto,
  MessagesMetadataDto,
  MessagesToolChoiceDto,
  MessagesToolDto,
  ThinkingConfigDto,
} from './messages-fields.dto.js';
export { TokenizeRequestDto, DetokenizeRequestDto, MAX_DETOKENIZE_TOKENS } from './tokenize-request.dto.js';
export { checkGenerates } from './generation-checks.js';
export type { DecodedImages, GenerationBody, GenerationRequest, ImagePart } from './generation-request.js';
export { checkGenerationRequest } from './generation-request.check.js';
export { toGenerationJob } from './generation-request.job.js';
export { CheckedGeneration, checkGeneration } from './checked-generation.js';
export { MAX_EXPIRY_SECONDS, parseExpiresAfter, type ParsedExpiry } from './expires-after.parser.js';
export { MetadataConstraint, METADATA_LIMITS } from './metadata.validator.js';
