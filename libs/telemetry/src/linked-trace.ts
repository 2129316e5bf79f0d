import { context, propagation, ROOT_CONTEXT, trace, type Attributes, type Link } from '@opentelemetry/api';
import { tracer, tracingStarted } from './tracing.js';

/**
 * Runs `work` in a trace of its own, whose root span links to the span a kept `traceparent` names:
 * a batch's lines each get their own small trace, found from the batch's, rather than one trace of
 * 50,000 lines. With tracing off, or nothing to link to, `work` just runs (a root span still, when on).
 */
export async function inLinkedTrace<T>(
  name: string,
  traceparent: string | undefined,
  attributes: Attributes,
  work: () => Promise<T>,
): Promise<T> {
  if (!tracingStarted()) return work();
  const linked = traceparent ? trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent })) : undefined;
  const links: Link[] = linked ? [{ context: linked }] : [];
  const span = tracer().startSpan(name, { root: true, links, attributes });
  try {
    return await context.with(trace.setSpan(ROOT_CONTEXT, span), work);
  } finally {
    span.end();
  }
}
