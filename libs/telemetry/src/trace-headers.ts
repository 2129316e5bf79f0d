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
