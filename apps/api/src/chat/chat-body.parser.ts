import { Logger } from '@nestjs/common';
import { ChatCompletionRequestDto, validateDto } from '@conveyor/validation';
import { OpenAiHttpError } from '../errors/openai-http.error.js';

const logger = new Logger('ChatBody');
// Class fields are defined on construction (ES2022 semantics), so an empty instance lists every known field.
const KNOWN_FIELDS = new Set(Object.keys(new ChatCompletionRequestDto()));

/** Validates a chat body; unknown fields are ignored (clients add new ones all the time) and logged at debug. */
export function parseChatBody(body: unknown): ChatCompletionRequestDto {
  const result = validateDto(ChatCompletionRequestDto, body);
  if (!result.ok) throw OpenAiHttpError.invalidRequest(result.problem.message, result.problem.param);
  const unknown = Object.keys(body as object).filter((k) => !KNOWN_FIELDS.has(k));
  if (unknown.length) logger.debug(`Ignoring unknown request fields: ${unknown.join(', ')}`);
  return result.value;
}
