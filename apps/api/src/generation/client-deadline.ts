import type { IncomingHttpHeaders } from 'node:http';
import { OpenAiHttpError } from '../errors/openai-http.error.js';

/** Our own header: milliseconds from the request's receipt the client will wait for its answer. */
export const DEADLINE_HEADER = 'x-conveyor-deadline-ms';
/** The official OpenAI and Anthropic SDKs' client timeout, in seconds, sent with every request. */
export const SDK_TIMEOUT_HEADER = 'x-stainless-timeout';
/**
 * The part of an SDK's timeout left for our answer to travel back: the SDK's clock started before ours,
 * and its own timeout must not fire before our error arrives.
 */
const SDK_TIMEOUT_SHARE = 0.9;
/**
 * The longest deadline a header sets: a day. An SDK's timeout past it sets a day, never more, since a
 * timer past 2^31-1 ms (24.8 days) fires at once in Node, and such a deadline answered 504 at once.
 */
const MAX_DEADLINE_MS = 86_400_000;

/**
 * The deadline a request's headers set, in milliseconds from receipt: the shorter of ours and the SDK's
 * timeout; null when neither names one. A malformed header of ours is the client's mistake (400); an
 * SDK's that cannot be read is ignored, as it is no setting the client chose to send.
 */
export function clientDeadlineMs(headers: IncomingHttpHeaders): number | null {
  const ours = headers[DEADLINE_HEADER];
  const sdk = Number(headers[SDK_TIMEOUT_HEADER]);
  let deadline: number | null = null;
  if (ours !== undefined) {
    const ms = Number(ours);
    if (Array.isArray(ours) || !/^\d+$/.test(ours) || ms < 1 || ms > MAX_DEADLINE_MS) {
      throw OpenAiHttpError.invalidRequest(
        `The ${DEADLINE_HEADER} header must be a whole number of milliseconds from 1 to ${MAX_DEADLINE_MS}.`,
        DEADLINE_HEADER,
      );
    }
    deadline = ms;
  }
  if (Number.isFinite(sdk) && sdk > 0) {
    const ms = Math.min(MAX_DEADLINE_MS, Math.max(1, Math.floor(sdk * 1000 * SDK_TIMEOUT_SHARE)));
    deadline = deadline === null ? ms : Math.min(deadline, ms);
  }
  return deadline;
}
