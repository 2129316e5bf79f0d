// class-transformer's @Type reads decorator metadata: load the polyfill with the DTOs, not in each app.
import 'reflect-metadata';
export { ChatCompletionRequestDto, StreamOptionsDto, MAX_MESSAGES } from './chat-completion-request.dto.js';
export { ChatMessageDto, CHAT_ROLES } from './chat-message.dto.js';
export { validateDto, type ValidationProblem, type Validated } from './validate-dto.js';
export { FunctionDefinitionDto, JsonSchemaFormatDto, ResponseFormatDto, ToolCallDto, ToolDto, FUNCTION_NAME } from './tools.dto.js';
export { CompletionRequestDto, PromptConstraint, MAX_PROMPTS } from './completion-request.dto.js';
export { EmbeddingRequestDto, EMBEDDING_ENCODING_FORMATS, MAX_EMBEDDING_INPUTS, embeddingInputs } from './embedding-request.dto.js';
