/** Queue and Redis key naming, shared by API and workers so both sides agree. */

export const chatQueueName = (deployment: string): string => `chat.${deployment}`;

/** Per-request reply stream: XADD by the worker, XREAD by the API. */
export const replyStreamKey = (prefix: string, requestId: string): string => `${prefix}:reply:${requestId}`;

/** Set when a client goes away, so a worker that has not started the job yet skips it. */
export const cancelKey = (prefix: string, requestId: string): string => `${prefix}:cancel:${requestId}`;

/** Pub/sub channel on which the API tells workers to stop a running request. */
export const cancelChannel = (prefix: string): string => `${prefix}:cancel`;

export const CANCEL_TTL_MS = 10 * 60 * 1000;

/**
 * Live workers of a deployment: a sorted set of worker ids scored by the time
 * their announcement expires. A worker that dies simply stops renewing.
 */
export const liveWorkersKey = (prefix: string, deployment: string): string => `${prefix}:live:${deployment}`;

/** Fixed-window request counter of one API key, shared by every API replica. */
export const rateLimitKey = (prefix: string, keyName: string, window: number): string => `${prefix}:ratelimit:${keyName}:${window}`;
