import { trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TracingConfig } from '@conveyor/config';

/** The instrumentation scope every span of the platform is made under. */
export const TRACER_NAME = 'conveyor';

/** What is started for a process, its own settings kept for the spans that read them. */
interface Started {
  provider: NodeTracerProvider;
  config: TracingConfig;
}

/**
 * Tracing is process-wide by nature (OpenTelemetry's API reads one global provider), so whether it is
 * on is kept here once, at start-up, rather than threaded through every constructor that makes a
 * BullMQ queue or a span.
 */
let started: Started | null = null;

/**
 * Starts the SDK when tracing is configured: a tracer provider exporting batches of spans over
 * OTLP/HTTP, the W3C `traceparent` propagator and the async-context manager. With tracing off nothing
 * is started, and OpenTelemetry's API stays its no-op self: a span costs a function call. `exporter`:
 * OTLP over HTTP; tests pass one that keeps the spans in memory.
 */
export function startTracing(
  config: TracingConfig | null,
  defaultServiceName: string,
  exporter: (config: TracingConfig) => SpanExporter = otlpExporter,
): void {
  if (!config || started) return;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: config.serviceName ?? defaultServiceName,
      [ATTR_SERVICE_VERSION]: '0.1.0',
    }),
    spanProcessors: [new BatchSpanProcessor(exporter(config))],
  });
  provider.register();
  started = { provider, config };
}

/** OTLP over HTTP, in the encoding configured. */
const otlpExporter = (config: TracingConfig): SpanExporter =>
  config.protocol === 'http/json' ? new JsonExporter({ url: config.url }) : new ProtobufExporter({ url: config.url });

/** Sends the spans not yet exported and stops the SDK; the last step of shutting a process down. */
export async function stopTracing(): Promise<void> {
  const current = started;
  started = null;
  await current?.provider.shutdown();
}

/** Exports the spans ended so far, now rather than with the next batch. */
export async function flushTracing(): Promise<void> {
  await started?.provider.forceFlush();
}

export const tracingStarted = (): boolean => started !== null;

/** Whether spans may carry prompts and outputs (TRACE_PROMPTS). */
export const tracePrompts = (): boolean => started?.config.prompts ?? false;

export const tracer = (): Tracer => trace.getTracer(TRACER_NAME);
