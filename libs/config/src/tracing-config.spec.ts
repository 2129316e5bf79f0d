import { describe, expect, it } from '@jest/globals';
import { EnvReader } from './env/env-reader.js';
import { readTracingConfig } from './tracing-config.js';

const read = (env: Record<string, string>) => {
  const r = new EnvReader(env);
  return { config: readTracingConfig(r), problems: r.problems };
};

describe('tracing configuration', () => {
  it('is off with no OpenTelemetry variable set, whatever else is', () => {
    expect(read({})).toEqual({ config: null, problems: [] });
    expect(read({ OTEL_SERVICE_NAME: 'api', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', TRACE_PROMPTS: 'true' })).toEqual(
      { config: null, problems: [] },
    );
  });

  it('sends to the endpoint’s /v1/traces, and to a traces endpoint as it is', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).config).toEqual({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      serviceName: null,
      prompts: false,
    });
    expect(
      read({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp',
      }).config?.url,
    ).toBe('https://traces.example/otlp');
  });

  it('is on at the specification’s default endpoint when the otlp exporter is asked for', () => {
    expect(read({ OTEL_TRACES_EXPORTER: 'otlp' }).config?.url).toBe('http://localhost:4318/v1/traces');
  });

  it('takes the traces protocol over the general one, and the service name', () => {
    const { config } = read({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'inference',
      TRACE_PROMPTS: 'yes',
    });
    expect(config).toMatchObject({ protocol: 'http/json', serviceName: 'inference', prompts: true });
  });

  it('is off with the SDK disabled or the exporter none, an endpoint set or not', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(read({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).config).toBeNull();
    expect(read({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).config).toBeNull();
  });

  it('refuses what it cannot send to', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }).problems).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL (got "collector:4318")',
    ]);
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).problems).toEqual([
      'OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http/json (got "grpc")',
    ]);
  });
});
