import type { DeploymentConfig } from '@conveyor/config';
import type { CompletionRequestDto } from '@conveyor/validation';
import { assertGenerationFits } from '../chat/chat-capabilities.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { choicesPerPrompt, completionMaxTokens, promptsOf } from './completion-request.mapper.js';

const given = <T>(v: T | null | undefined): v is T => v !== null && v !== undefined;

/**
 * Refuses well-formed legacy requests this server cannot honour, naming the
 * field, rather than silently ignoring what the caller asked for.
 */
export function assertCompletionSupported(dto: CompletionRequestDto, deployment: DeploymentConfig): void {
  const n = choicesPerPrompt(dto);
  const maxTokens = completionMaxTokens(dto, deployment.defaults);
  assertGenerationFits(deployment, maxTokens, n, { n: 'n' });
  // Every choice of every prompt is a sequence of one worker's context, generated together.
  const prompts = promptsOf(dto).length;
  if (prompts * n > deployment.parallel) {
    throw OpenAiHttpError.invalidRequest(
      `${prompts} prompt${prompts === 1 ? '' : 's'} with n = ${n} make ${prompts * n} choices; this deployment generates at most ${deployment.parallel} at once.`,
      n > 1 ? 'n' : 'prompt',
      'invalid_value',
    );
  }
  // best_of generates extra candidates server-side and keeps the best; with best_of = n nothing is discarded.
  if (given(dto.best_of) && dto.best_of !== 1 && dto.best_of !== n) throw OpenAiHttpError.unsupported(`best_of other than 1 or n (${n})`, 'best_of');
  if (dto.suffix) throw OpenAiHttpError.unsupported('suffix (text insertion)', 'suffix');
  if (dto.echo === true && given(dto.logprobs)) throw OpenAiHttpError.unsupported('logprobs with echo (log-probabilities of the prompt tokens)', 'echo');
  if (given(dto.min_tokens) && dto.min_tokens > maxTokens) {
    throw OpenAiHttpError.invalidRequest(`min_tokens (${dto.min_tokens}) must not exceed max_tokens (${maxTokens}).`, 'min_tokens');
  }
}
