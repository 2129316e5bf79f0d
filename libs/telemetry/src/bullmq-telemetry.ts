import type { QueueBaseOptions } from 'bullmq';
import { BullMQOtel } from 'bullmq-otel';
import { TRACER_NAME, tracingStarted } from './tracing.js';

let telemetry: BullMQOtel | undefined;

/**
 * BullMQ's own telemetry, spread into a Queue's or a Worker's options: adding a job makes a producer
 * span and carries its context in the job, and processing it makes a consumer span continuing it. With
 * tracing off it is nothing at all, so BullMQ writes no trace metadata into jobs.
 */
export function bullMqTelemetry(): Pick<QueueBaseOptions, 'telemetry'> {
  if (!tracingStarted()) return {};
  telemetry ??= new BullMQOtel({ tracerName: TRACER_NAME });
  return { telemetry };
}
