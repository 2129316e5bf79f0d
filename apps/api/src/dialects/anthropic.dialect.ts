import { ErrorCode, type MessageStreamEvent, type MessagesErrorBody, type MessagesErrorType } from '@conveyor/openai';
import type { OpenAiHttpError } from '../errors/openai-http.error.js';
import type { SseFraming } from '../generation/reply-stream.js';
import type { Dialect } from './dialect.js';

const TYPE_BY_STATUS: Readonly<Record<number, MessagesErrorType>> = {
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** An error in Anthropic's shape, with the status its clients expect for it. */
export interface MessagesError {
  status: number;
  body: MessagesErrorBody;
  headers: Record<string, string>;
}

/**
 * The error an Anthropic client is shown for one the platform raised. A full queue, and a platform
 * that cannot take the request now (503), are Anthropic's 529 `overloaded_error`, which its clients
 * retry; a key over its rate limit stays a 429. The message keeps the field at fault when one is named.
 */
export function toMessagesError(error: OpenAiHttpError): MessagesError {
  const overloaded = error.code === ErrorCode.queueFull || error.status === 503;
  const status = overloaded ? 529 : error.status;
  const type: MessagesErrorType = TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  const message =
    error.param && !error.message.includes(error.param) ? `${error.param}: ${error.message}` : error.message;
  return { status, body: { type: 'error', error: { type, message } }, headers: error.headers };
}

/** Anthropic's wire: `{type: "error", error: {type, message}}`, with the statuses its clients expect. */
export const ANTHROPIC: Dialect = { name: 'anthropic', error: toMessagesError };

/** Anthropic's stream framing: each event named by its type, an `error` event on failure, no `[DONE]`. */
export const ANTHROPIC_EVENTS: SseFraming<MessageStreamEvent> = {
  eventName: (event) => event.type,
  error: (err) => ({ event: 'error', body: toMessagesError(err).body }),
  done: false,
};
