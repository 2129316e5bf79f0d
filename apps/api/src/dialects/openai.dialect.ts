import type { Dialect } from './dialect.js';

/** OpenAI's wire: `{error: {message, type, param, code}}` with the error's own status; every route's unless it says otherwise. */
export const OPENAI: Dialect = {
  name: 'openai',
  error: (error) => ({ status: error.status, body: error.toBody(), headers: error.headers }),
};
