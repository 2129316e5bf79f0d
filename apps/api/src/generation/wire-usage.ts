import type { Usage } from '@conveyor/openai';
import type { TokenUsage } from '@conveyor/queue';

/**
 * A job's token counts in OpenAI's usage shape, the same in every route's replies (and batch output lines):
 * with `prompt_tokens_details.cached_tokens` when the worker reports what its prompt cache reused.
 */
export const toUsage = (u: TokenUsage): Usage => ({
  prompt_tokens: u.promptTokens,
  completion_tokens: u.completionTokens,
  total_tokens: u.promptTokens + u.completionTokens,
  ...(u.cachedTokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: u.cachedTokens } }),
});
