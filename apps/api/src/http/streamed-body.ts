import { Readable } from 'node:stream';
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest, preParsingAsyncHookHandler } from 'fastify';
import { addRouteConfig } from '../contracts/route-config.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads its own body, as a stream (`@StreamsBody()`). */
    streamsBody?: boolean;
  }
  interface FastifyRequest {
    /** The body, unread, of a route that reads its own (`@StreamsBody()`); null on every other route. */
    bodyStream: BodyStream | null;
  }
}

/** A body as it arrives: what the route reads itself, and what its headers said of it. */
export interface BodyStream {
  stream: Readable;
  /** Content-Length as sent; null when the body came chunked. */
  declaredBytes: number | null;
  contentType: string | undefined;
}

/**
 * Marks a route that reads its own body as a stream, within a limit of its own: Fastify neither reads
 * nor parses it, so a body of hundreds of megabytes (a Message Batch) is never held whole, and the
 * route is not bound by BODY_LIMIT_BYTES, which suits every other request.
 */
export const StreamsBody = (): MethodDecorator => addRouteConfig({ streamsBody: true });

/** Whether the request's route reads its own body. */
export const streamsBody = (request: FastifyRequest): boolean => request.routeOptions.config?.streamsBody === true;

/** The body of a `@StreamsBody()` route. */
export const BodyStreamOf = createParamDecorator((_: unknown, context: ExecutionContext): BodyStream => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  if (!request.bodyStream)
    throw new Error(`${request.routeOptions.url} reads its body as a stream: mark it @StreamsBody()`);
  return request.bodyStream;
});

/**
 * Gives each `@StreamsBody()` route its body as a stream. Fastify reads a body in the preParsing step's
 * place: handing it an empty stream (and a length of 0 to match) leaves the real one unread for the
 * route.
 */
export function installStreamedBodies(fastify: FastifyInstance): void {
  fastify.decorateRequest('bodyStream', null);
  fastify.addHook('onRoute', (route) => {
    if (!route.config?.streamsBody) return;
    const before = route.preParsing === undefined ? [] : [route.preParsing].flat();
    route.preParsing = [...before, takeBody];
  });
}

const takeBody: preParsingAsyncHookHandler = async (request, _reply, payload) => {
  const length = request.headers['content-length'];
  request.bodyStream = {
    stream: payload,
    declaredBytes: length === undefined ? null : Number(length),
    contentType: request.headers['content-type'],
  };
  request.headers['content-length'] = '0';
  return Readable.from([]);
};
