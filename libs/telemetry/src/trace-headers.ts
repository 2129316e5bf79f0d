import { context, propagation } from '@opentelemetry/api';

/**
 * The W3C `traceparent` (and `tracestate`) of the active span, for a request this process makes, so
 * the server it calls (llama-server, vLLM) joins the trace. Empty with tracing off.
 */
export function traceHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  return headers;
}

/** The active span's `traceparent`, to keep beside something that outlives the request (a batch). */
export const currentTraceparent = (): string | undefined => traceHeaders().traceparent;
