import type { FastifyRequest } from 'fastify';
import { addRouteConfig } from '../contracts/route-config.js';
import type { Dialect } from './dialect.js';
import { ANTHROPIC } from './anthropic.dialect.js';
import { OPENAI } from './openai.dialect.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The API the route speaks: its errors, from any hook or the route itself, take this shape. */
    dialect?: Dialect;
  }
}

/**
 * Declares the dialect every route of a controller speaks: the one registry of which route speaks
 * which API. It rides on each route's Fastify config, so the hooks that refuse a request before any
 * route runs (Host, content type, body deadline) read it as the exception filter does. One controller
 * speaks one dialect; a route that speaks none is OpenAI's.
 */
export function Speaks(dialect: Dialect): ClassDecorator {
  return (target) => {
    const proto = target.prototype as object;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const method = Object.getOwnPropertyDescriptor(proto, name);
      if (name !== 'constructor' && typeof method?.value === 'function')
        addRouteConfig({ dialect })(proto, name, method);
    }
  };
}

/**
 * A path of Anthropic's Messages family (`/v1/messages`, its batches and token count, under any prefix
 * such as a hosted form's `/{org}/{app}`): a request for one that reached no route (an empty org or app,
 * a mistyped id) is answered in Anthropic's shape, which its clients read.
 */
const MESSAGES_PATH = /\/v1\/messages(?:[/?]|$)/;

/** The dialect of the route a request reached; where it reached none, Anthropic's for a Messages path, else OpenAI's. */
export const dialectOf = (request: FastifyRequest): Dialect =>
  request.routeOptions.config?.dialect ?? (MESSAGES_PATH.test(request.url) ? ANTHROPIC : OPENAI);
