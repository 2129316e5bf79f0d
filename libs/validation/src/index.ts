// class-transformer's @Type reads decorator metadata: load the polyfill with the DTOs, not in each app.
import 'reflect-metadata';
export { ChatCompletionRequestDto, StreamOptionsDto, MAX_MESSAGES } from './chat-completion-request.dto.js';
export { ChatMessageDto, CHAT_ROLES } from './chat-message.dto.js';
export { validateDto, type ValidationProblem, type Validated } from './validate-dto.js';
