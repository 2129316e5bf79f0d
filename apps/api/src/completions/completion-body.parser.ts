import { Logger } from '@nestjs/common';
import { CompletionRequestDto, validateDto } from '@conveyor/validation';
import { OpenAiHttpError } from '../errors/openai-http.error.js';

const logger = new Logger('CompletionBody');
// Class fields are defined on construction (ES2022 semantics), so an empty instance lists every known field.
const KNOWN_FIELDS = new Set(Object.keys(new CompletionRequestDto()));

/** OpenAI also takes a prompt as token ids (`[1, 2]`) or several of them (`[[1, 2], [3]]`). */
const isTokenPrompt = (prompt: unknown): boolean =>
  Array.isArray(prompt) && prompt.length > 0 && prompt.every((p) => typeof p === 'number' || (Array.isArray(p) && p.every((t) => typeof t === 'number')));

/**
 * Validates a legacy completions body. Token-id prompts are well-formed for
 * OpenAI, so they get "unsupported" rather than a type error. Unknown fields
 * are ignored and logged at debug, as on the chat route.
 */
export function parseCompletionBody(body: unknown): CompletionRequestDto {
  if (typeof body === 'object' && body !== null && isTokenPrompt((body as { prompt?: unknown }).prompt)) {
    throw OpenAiHttpError.unsupported('A prompt of token ids', 'prompt');
  }
  const result = validateDto(CompletionRequestDto, body);
  if (!result.ok) throw OpenAiHttpError.invalidRequest(result.problem.message, result.problem.param);
  const unknown = Object.keys(body as object).filter((k) => !KNOWN_FIELDS.has(k));
  if (unknown.length) logger.debug(`Ignoring unknown request fields: ${unknown.join(', ')}`);
  return result.value;
}
