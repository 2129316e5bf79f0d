import type { FastifyReply } from 'fastify';

/** Aborts when the client goes away before the reply is finished (a POST's request `close` fires once its body is read). */
export function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}
