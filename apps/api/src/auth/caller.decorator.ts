import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/** Owner of files and batches when authentication is off. */
export const ANONYMOUS = 'anonymous';

/** The guard records the authenticated key's name here (never the key itself). */
export const CALLER = Symbol('conveyor.caller');

export type RequestWithCaller = FastifyRequest & { [CALLER]?: string };

/** The name of the API key the request authenticated with, or "anonymous". */
export const Caller = createParamDecorator((_: unknown, ctx: ExecutionContext): string => {
  return ctx.switchToHttp().getRequest<RequestWithCaller>()[CALLER] ?? ANONYMOUS;
});
