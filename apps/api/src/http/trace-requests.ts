import { context, propagation, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tracer, tracingStarted } from '@conveyor/telemetry';

interface Traced {
  span: Span;
  context: Context;
}

/**
 * Makes each request a server span, continuing the caller's `traceparent` when it sends one, and runs
 * its route with that span active, so the job it queues (BullMQ's producer span) and all that follows
 * are in the caller's trace. Installed only with tracing on. The span is started before any other
 * hook, and made active in the last hook before the handler: Fastify reads a body in stream events,
 * which would lose an async context entered earlier. No header or body is recorded: keys never are.
 */
export function traceRequests(fastify: FastifyInstance): void {
  if (!tracingStarted()) return;
  const traced = new WeakMap<FastifyRequest, Traced>();
  fastify.addHook('onRequest', (request, _reply, done) => {
    const parent = propagation.extract(context.active(), request.headers);
    const route = request.routeOptions.url;
    const span = tracer().startSpan(
      route ? `${request.method} ${route}` : request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          'http.route': route,
          'url.path': request.url.split('?')[0],
          'url.scheme': request.protocol,
        },
      },
      parent,
    );
    traced.set(request, { span, context: trace.setSpan(parent, span) });
    done();
  });
  fastify.addHook('preHandler', (request, _reply, done) => {
    const t = traced.get(request);
    if (t) context.with(t.context, done);
    else done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const t = traced.get(request);
    if (t) {
      t.span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) t.span.setStatus({ code: SpanStatusCode.ERROR });
      t.span.end();
      traced.delete(request);
    }
    done();
  });
  fastify.addHook('onRequestAbort', (request, done) => {
    const t = traced.get(request);
    if (t) {
      t.span.setAttribute('conveyor.client_gone', true);
      t.span.end();
      traced.delete(request);
    }
    done();
  });
}
