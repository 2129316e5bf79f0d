import { describe, expect, it } from '@jest/globals';
import { context, trace } from '@opentelemetry/api';
import { bullMqTelemetry } from './bullmq-telemetry.js';
import { traceHeaders } from './trace-headers.js';
import { startTracing, tracePrompts, tracer, tracingStarted } from './tracing.js';

describe('tracing, not configured', () => {
  startTracing(null, 'conveyor-test');

  it('starts no SDK: spans are OpenTelemetry’s no-op ones, and record nothing', () => {
    expect(tracingStarted()).toBe(false);
    const span = tracer().startSpan('chat tiny');
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toBe('00000000000000000000000000000000');
    span.end();
  });

  it('gives BullMQ no telemetry, so jobs carry no trace context', () => {
    expect(bullMqTelemetry()).toEqual({});
  });

  it('sends no traceparent upstream, even inside a caller’s trace', () => {
    const caller = trace.wrapSpanContext({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 1,
    });
    expect(context.with(trace.setSpan(context.active(), caller), traceHeaders)).toEqual({});
    expect(tracePrompts()).toBe(false);
  });
});
