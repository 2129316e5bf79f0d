export {
  startTracing,
  stopTracing,
  flushTracing,
  tracingStarted,
  tracePrompts,
  tracer,
  TRACER_NAME,
} from './tracing.js';
export { bullMqTelemetry } from './bullmq-telemetry.js';
export { currentTraceparent, traceHeaders } from './trace-headers.js';
export { inLinkedTrace } from './linked-trace.js';
export * from './gen-ai-attributes.js';
