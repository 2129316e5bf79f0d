import type { SseFraming } from '../generation/reply-stream.js';
import type { Dialect } from './dialect.js';

/** OpenAI's wire: `{error: {message, type, param, code}}` with the error's own status; every route's unless it says otherwise. */
export const OPENAI: Dialect = {
  name: 'openai',
  error: (error) => ({ status: error.status, body: error.toBody(), headers: error.headers }),
};

/** OpenAI's chunk streams (chat and legacy completions): `data:` lines, errors in OpenAI's shape, `[DONE]`. */
export const OPENAI_CHUNKS: SseFraming<unknown> = { error: (err) => ({ body: err.toBody() }), done: true };
