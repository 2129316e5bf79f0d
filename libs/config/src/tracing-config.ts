import type { TracingConfig } from './config.types.js';
import type { EnvReader } from './env/env-reader.js';

/** The collector the OTLP specification falls back to when tracing is asked for with no endpoint. */
const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';

/**
 * OpenTelemetry tracing, read as the specification defines its variables: off unless an OTLP endpoint
 * is set or `OTEL_TRACES_EXPORTER=otlp` is, and off whatever else is set with `OTEL_SDK_DISABLED=true`
 * or `OTEL_TRACES_EXPORTER=none`. Returns null when off: nothing is started then.
 */
export function readTracingConfig(r: EnvReader): TracingConfig | null {
  const endpoint = url(r, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const tracesEndpoint = url(r, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const exporter = r.oneOf('OTEL_TRACES_EXPORTER');
  const askedFor = r.optionalString('OTEL_TRACES_EXPORTER') !== undefined;
  const protocol = r.optionalString('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL')
    ? r.oneOf('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL')
    : r.oneOf('OTEL_EXPORTER_OTLP_PROTOCOL');
  const serviceName = r.optionalString('OTEL_SERVICE_NAME') ?? null;
  const prompts = r.bool('TRACE_PROMPTS');
  if (r.bool('OTEL_SDK_DISABLED') || exporter === 'none') return null;
  if (!endpoint && !tracesEndpoint && !askedFor) return null;
  return {
    // The specification: the signal's own endpoint as it is, the general one with the signal's path.
    url: tracesEndpoint ?? `${(endpoint ?? DEFAULT_OTLP_ENDPOINT).replace(/\/+$/, '')}/v1/traces`,
    protocol,
    serviceName,
    prompts,
  };
}

function url(
  r: EnvReader,
  name: 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
): string | undefined {
  const raw = r.optionalString(name);
  if (raw === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(raw);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) {
    r.problems.push(`${name} must be an http(s) URL (got "${raw}")`);
    return undefined;
  }
  return raw;
}
