/**
 * A reply's events as workers write them for the API to read (three prompt tokens; two generated, cut at
 * the length limit), and the error a replica ends its replies with as it shuts down.
 */
import { ErrorCode } from '@conveyor/openai';
import type { ReplyEvent } from '@conveyor/queue';
import { OpenAiHttpError } from '../../apps/api/src/errors/openai-http.error.js';

export const start = (attempt = 1, seq = 0, resumed = false): ReplyEvent => ({
  type: 'start',
  attempt,
  seq,
  promptTokens: 3,
  resumed,
});
export const delta = (text: string, seq: number, attempt = 1): ReplyEvent => ({ type: 'delta', attempt, seq, text });
export const end = (seq: number, attempt = 1): ReplyEvent => ({
  type: 'end',
  attempt,
  seq,
  finishReason: 'length',
  usage: { promptTokens: 3, completionTokens: 2 },
});
export const errorEvent = (status: number, code: string, seq = 1): Extract<ReplyEvent, { type: 'error' }> => ({
  type: 'error',
  attempt: 1,
  seq,
  status,
  code,
  message: `worker says ${code}`,
});

export const shuttingDown = () =>
  new OpenAiHttpError(503, 'service_unavailable', 'bye', null, ErrorCode.serverShuttingDown);
