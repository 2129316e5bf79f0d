import { ErrorCode } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import type { Admission } from '../repositories/queue-admission.port.js';

/**
 * A request refused a place in its deployment's queue: 429 with Retry-After, saying whether the queue is
 * full or its free places are held for other API keys (fair shares), so a client knows which it met.
 */
export function queueRefusal(deployment: string, refused: Admission & { admitted: false }): OpenAiHttpError {
  const message =
    refused.held === undefined
      ? `The "${deployment}" queue is full (${refused.queued} requests waiting); retry shortly.`
      : `The "${deployment}" queue's free places are held for other API keys: this key holds ` +
        `${refused.held} of the ${refused.queued} places taken, its weighted share being ${refused.share}; ` +
        'retry shortly.';
  return new OpenAiHttpError(429, 'rate_limit_error', message, null, ErrorCode.queueFull, { 'retry-after': '1' });
}
