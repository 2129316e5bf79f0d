export { startTracing, stopTracing, tracingStarted, tracePrompts, tracer, TRACER_NAME } from './tracing.js';
export { bullMqTelemetry } from './bullmq-telemetry.js';
export { traceHeaders } from './trace-headers.js';
export * from './gen-ai-attributes.js';
