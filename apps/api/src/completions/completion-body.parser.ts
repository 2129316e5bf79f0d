import { CompletionRequestDto, RequestProblem } from '@conveyor/protocol';
import { parseRequest } from '../generation/parse-request.js';

/** OpenAI also takes a prompt as token ids (`[1, 2]`) or several of them (`[[1, 2], [3]]`). */
const isTokenPrompt = (prompt: unknown): boolean =>
  Array.isArray(prompt) &&
  prompt.length > 0 &&
  prompt.every((p) => typeof p === 'number' || (Array.isArray(p) && p.every((t) => typeof t === 'number')));

/**
 * Validates a legacy completions body. Token-id prompts are well-formed for OpenAI, so they
 * get "unsupported" rather than a type error.
 */
export function parseCompletionBody(body: unknown): CompletionRequestDto {
  if (typeof body === 'object' && body !== null && isTokenPrompt((body as { prompt?: unknown }).prompt)) {
    throw RequestProblem.unsupported('A prompt of token ids', 'prompt');
  }
  return parseRequest(CompletionRequestDto, body);
}
