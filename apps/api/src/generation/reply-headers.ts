import type { FastifyReply } from 'fastify';

/**
 * Headers the pipeline decides for a request's HTTP reply as it admits it (its key's token quota), before
 * any of the reply is sent. Every route hands the pipeline the request's abort signal, and nothing else of
 * its HTTP exchange: the signal names the reply, so that no use case carries a reply object along.
 */
const replies = new WeakMap<AbortSignal, FastifyReply>();

/** Ties a request's abort signal to its HTTP reply (once, as the request is taken in). */
export function replyHeadersFor(signal: AbortSignal, reply: FastifyReply): void {
  replies.set(signal, reply);
}

/** Sets headers on the HTTP reply of the request `signal` belongs to; none for a request that has none (a batch line). */
export function sendReplyHeaders(signal: AbortSignal, headers: Record<string, string>): void {
  replies.get(signal)?.headers(headers);
}
