import type { EnvVarSpec } from './env-var.js';

/**
 * The OpenTelemetry specification's own variables, read as it defines them, so a collector set up for
 * other services needs nothing new here. The exporter also reads the rest of its family itself
 * (`OTEL_EXPORTER_OTLP_HEADERS`, `_TIMEOUT`, `_COMPRESSION` and their `_TRACES_` forms).
 */
export const TRACING_VARS = {
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    kind: 'text',
    defaultText: 'unset: no traces are exported',
    allowedText: 'an http(s) URL',
    meaning:
      'Where the OTLP/HTTP collector is; traces go to its `/v1/traces`. Setting it (or the variable below) turns tracing on.',
  },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
    kind: 'text',
    defaultText: 'unset: `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces`',
    allowedText: 'an http(s) URL, used as it is',
    meaning: 'Where traces go, when they go elsewhere than the endpoint above; setting it turns tracing on.',
  },
  OTEL_EXPORTER_OTLP_PROTOCOL: {
    kind: 'enum',
    default: 'http/protobuf',
    values: ['http/protobuf', 'http/json'],
    meaning: 'How spans are sent to the collector. gRPC is not offered.',
  },
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: {
    kind: 'enum',
    default: 'http/protobuf',
    defaultText: '`OTEL_EXPORTER_OTLP_PROTOCOL`',
    values: ['http/protobuf', 'http/json'],
    meaning: 'How spans are sent, for traces alone.',
  },
  OTEL_TRACES_EXPORTER: {
    kind: 'enum',
    default: 'otlp',
    values: ['otlp', 'none'],
    meaning:
      '`none` turns tracing off whatever else is set; `otlp` set explicitly turns it on, to `http://localhost:4318` when no endpoint is set.',
  },
  OTEL_SDK_DISABLED: {
    kind: 'bool',
    default: false,
    meaning: 'True: no tracing at all, whatever else is set.',
  },
  OTEL_SERVICE_NAME: {
    kind: 'text',
    defaultText: '`conveyor-api` for the API, `conveyor-worker` for a worker',
    meaning: 'The `service.name` every span of the process carries.',
  },
  TRACE_PROMPTS: {
    kind: 'bool',
    default: false,
    meaning:
      'Put prompts and outputs in the generation spans (as `gen_ai.input.messages` and `gen_ai.output.messages`). Keys are never traced.',
  },
} as const satisfies Record<string, EnvVarSpec>;
