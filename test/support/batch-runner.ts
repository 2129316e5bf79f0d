import type { FileStore } from '@conveyor/batch-store';
import type { PlatformConfig } from '@conveyor/config';
import type { DeploymentRegistry } from '../../apps/api/src/deployments/deployment-registry.service.js';
import type { BatchEndpoints } from '../../apps/api/src/generation/batch-endpoint.js';
import type { JobQueue } from '../../apps/api/src/generation/job-queue.port.js';
import type { JobRouting } from '../../apps/api/src/generation/job-routing.service.js';
import type { PlatformMetrics } from '../../apps/api/src/metrics/platform-metrics.service.js';
import type { FileStoreCheck } from '../../apps/api/src/platform/file-store.check.js';
import type { BatchLines } from '../../apps/api/src/repositories/batch-lines.port.js';
import type { BatchRecords } from '../../apps/api/src/repositories/batch-records.port.js';
import type { ImageStore } from '../../apps/api/src/repositories/image-store.port.js';
import type { LiveWorkers } from '../../apps/api/src/repositories/live-workers.port.js';
import { BatchInput } from '../../apps/api/src/batches/batch-input.reader.js';
import { BatchRunner } from '../../apps/api/src/batches/batch-runner.service.js';
import { BatchValidator } from '../../apps/api/src/batches/batch-validator.js';
import { LineFeeder } from '../../apps/api/src/batches/line-feeder.js';
import { LineRecovery } from '../../apps/api/src/batches/line-recovery.js';
import { ResultWriter } from '../../apps/api/src/batches/result-writer.js';

/** What the batch runner and its collaborators are built from: the ports and services the app module provides. */
export interface BatchRunnerParts {
  config: PlatformConfig;
  endpoints: BatchEndpoints;
  records: BatchRecords;
  lines: BatchLines;
  store: FileStore;
  queue: JobQueue;
  registry: DeploymentRegistry;
  storeCheck: FileStoreCheck;
  metrics: PlatformMetrics;
  routing: JobRouting;
  workers: LiveWorkers;
  images: ImageStore;
}

/** The batch runner wired to its collaborators as the app module wires them, with the collaborators at hand. */
export function composeBatchRunner(p: BatchRunnerParts) {
  const input = new BatchInput(p.store, p.endpoints, p.registry);
  const feeder = new LineFeeder(
    p.config,
    input,
    p.records,
    p.lines,
    p.queue,
    p.routing,
    p.registry,
    p.workers,
    p.images,
  );
  const writer = new ResultWriter(p.endpoints, p.records, p.lines, p.store, p.metrics);
  const recovery = new LineRecovery(p.records, p.lines, p.queue, p.images, input, feeder, writer);
  const validator = new BatchValidator(p.config, input, p.records, p.store);
  const runner = new BatchRunner(p.config, p.records, p.lines, p.storeCheck, validator, feeder, writer, recovery);
  return { runner, input, validator, feeder, writer, recovery };
}
