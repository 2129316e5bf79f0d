import { maxHeaderSize, type Server } from 'node:http';
import type { FastifyHttpOptions } from 'fastify';
import type { PlatformConfig } from '@conveyor/config';
import { clientErrorHandler, frameworkErrorHandler } from './client-errors.js';

/** How often Node looks for requests past their deadline: the precision of every request timeout. */
const CHECK_INTERVAL_MS = 1000;

/**
 * The HTTP server's limits and its answers to requests refused before any route runs.
 *
 * Fastify turns off Node's request timeout (0) unless told otherwise, so a socket that sent headers
 * and part of a body stayed open for good. Headers must now arrive within REQUEST_BODY_TIMEOUT_MS
 * (Node's `headersTimeout`); the body's own deadline depends on the route and is kept by a request
 * hook (see request-checks.ts). Node's `requestTimeout` stays as a backstop past both, for requests
 * no hook sees: one refused by the router (a malformed URL, say) whose body keeps trickling in.
 */
export function httpServerOptions(api: PlatformConfig['api']): FastifyHttpOptions<Server> {
  const backstopMs = api.bodyTimeoutMs + Math.max(api.bodyTimeoutMs, api.uploadTimeoutMs);
  return {
    http: {
      headersTimeout: api.bodyTimeoutMs,
      requestTimeout: backstopMs,
      connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, api.bodyTimeoutMs),
      // A request without Host is refused by the request checks, in the shape of its route's dialect.
      requireHostHeader: false,
    },
    // Fastify sets this on the server after creating it: it must agree with the value above.
    requestTimeout: backstopMs,
    clientErrorHandler: clientErrorHandler(maxHeaderSize),
    // Replaces the adapter's own handler, which only runs Nest's security hook (unused here) and then
    // answers in Fastify's shape.
    frameworkErrors: frameworkErrorHandler,
  };
}
