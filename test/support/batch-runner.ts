import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { FileStore } from '@conveyor/batch-store';
import { loadConfig, type PlatformConfig } from '@conveyor/config';
import { jobImageHashes } from '@conveyor/queue';
import { TokenQuota } from '../../apps/api/src/auth/token-quota.service.js';
import { DeploymentRegistry } from '../../apps/api/src/deployments/deployment-registry.service.js';
import type { BatchEndpoints } from '../../apps/api/src/contracts/batch-endpoint.js';
import type { JobQueue } from '../../apps/api/src/contracts/job-queue.port.js';
import { JobRouting } from '../../apps/api/src/generation/job-routing.service.js';
import { JobSubmission } from '../../apps/api/src/generation/job-submission.service.js';
import { PlatformMetrics } from '../../apps/api/src/metrics/platform-metrics.service.js';
import { FileStoreCheck } from '../../apps/api/src/platform/file-store.check.js';
import type { BatchLines } from '../../apps/api/src/repositories/batch-lines.port.js';
import { newBatchRecord, type BatchRecord } from '../../apps/api/src/repositories/batch-record.js';
import type { BatchRecords } from '../../apps/api/src/repositories/batch-records.port.js';
import type { ImageStore } from '../../apps/api/src/repositories/image-store.port.js';
import type { LiveWorkers } from '../../apps/api/src/repositories/live-workers.port.js';
import type { UnqueuedLines } from '../../apps/api/src/repositories/unqueued-lines.port.js';
import type { BatchShares } from '../../apps/api/src/repositories/batch-shares.port.js';
import { BatchInput } from '../../apps/api/src/batches/batch-input.reader.js';
import { BatchPlans } from '../../apps/api/src/batches/batch-plans.js';
import { BatchEnding } from '../../apps/api/src/batches/batch-ending.js';
import { BatchRunner } from '../../apps/api/src/batches/batch-runner.service.js';
import { BatchValidator } from '../../apps/api/src/batches/batch-validator.js';
import { LineFeeder } from '../../apps/api/src/batches/line-feeder.js';
import { LineRecovery } from '../../apps/api/src/batches/line-recovery.js';
import { LineShares } from '../../apps/api/src/batches/line-shares.js';
import { ResultWriter } from '../../apps/api/src/batches/result-writer.js';
import { BatchEvents } from '../../apps/api/src/webhooks/batch-events.service.js';
import { OutputExpiry } from '../../apps/api/src/batches/output-expiry.js';
import { InMemoryUsage } from './generation-fakes.js';
import { InMemoryTokenQuotas } from './token-quota-fakes.js';
import {
  MODEL,
  MemoryFiles,
  MemoryImages,
  MemoryLines,
  MemoryExpiries,
  MemoryOutbox,
  MemoryQueue,
  MemoryRecords,
  MemoryShares,
  MemoryUnqueued,
  NoRoutes,
  NoWorkers,
  SameStore,
  endpoints,
  input,
} from './batch-fakes.js';
import { configuredKeys } from './api-key-fakes.js';

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
  unqueued: UnqueuedLines;
  quota: TokenQuota;
  outbox: MemoryOutbox;
  expiries?: MemoryExpiries;
  shares: BatchShares;
  usage?: InMemoryUsage;
}

/** The batch runner wired to its collaborators as the app module wires them, with the collaborators at hand. */
export function composeBatchRunner(p: BatchRunnerParts) {
  const input = new BatchInput(p.config, p.store, p.endpoints, p.registry);
  const shares = new LineShares(p.config, p.shares, configuredKeys(p.config), p.workers, p.registry);
  const feeder = new LineFeeder(
    p.config,
    input,
    p.records,
    p.lines,
    new JobSubmission(p.queue, p.routing, p.images),
    p.registry,
    p.workers,
    p.unqueued,
    shares,
  );
  const writer = new ResultWriter(
    p.endpoints,
    p.records,
    p.lines,
    p.store,
    p.metrics,
    p.usage ?? new InMemoryUsage(),
    p.quota,
  );
  const recovery = new LineRecovery(p.config, p.records, p.lines, p.queue, p.images, input, feeder, writer);
  const plans = new BatchPlans(p.store, input);
  const validator = new BatchValidator(p.config, input, p.records, p.store, p.unqueued, p.quota, plans, p.metrics);
  const runner = new BatchRunner(
    p.config,
    p.records,
    p.lines,
    p.storeCheck,
    validator,
    feeder,
    writer,
    recovery,
    plans,
    new BatchEnding(
      p.config,
      p.records,
      p.lines,
      new BatchEvents(configuredKeys(p.config), p.outbox),
      new OutputExpiry(p.expiries ?? new MemoryExpiries()),
      plans,
      p.quota,
      p.unqueued,
      shares,
    ),
  );
  return { runner, input, validator, feeder, writer, recovery };
}

/**
 * One test's batch runners over in-memory ports (BATCH_INFLIGHT 4, a 1 s lease), and what the tests do
 * around them: create a batch, play the workers, tick to the end. Runners made from one harness share
 * Redis and the file store, as replicas do.
 */
export class BatchRunnerHarness {
  config: PlatformConfig;
  readonly records = new MemoryRecords();
  readonly lines = new MemoryLines(this.records);
  readonly files = new MemoryFiles();
  readonly queue = new MemoryQueue();
  readonly workers = new NoWorkers();
  readonly images = new MemoryImages();
  readonly unqueued = new MemoryUnqueued();
  readonly quotas = new InMemoryTokenQuotas();
  readonly outbox = new MemoryOutbox();
  readonly expiries = new MemoryExpiries();
  readonly shares = new MemoryShares();
  /** The usage ledger every runner of the harness counts into. */
  readonly usage = new InMemoryUsage();
  readonly metrics: PlatformMetrics;
  /** The owner of the batches `createBatch` makes. */
  owner = 'anonymous';

  constructor(env: Record<string, string> = {}) {
    this.config = loadConfig({ MODEL: 'tiny', BATCH_INFLIGHT: '4', BATCH_LEASE_MS: '1000', ...env });
    this.metrics = new PlatformMetrics(new DeploymentRegistry(this.config), this.queue, this.workers, this.records);
  }

  /** Another replica's runner, with its collaborators. */
  compose() {
    return composeBatchRunner({
      config: this.config,
      endpoints,
      records: this.records,
      lines: this.lines,
      store: this.files,
      queue: this.queue,
      registry: new DeploymentRegistry(this.config),
      storeCheck: new FileStoreCheck(this.config, this.files, new SameStore()),
      metrics: this.metrics,
      routing: new JobRouting(new DeploymentRegistry(this.config), new NoRoutes(), this.metrics),
      workers: this.workers,
      images: this.images,
      unqueued: this.unqueued,
      quota: new TokenQuota(configuredKeys(this.config), this.quotas),
      outbox: this.outbox,
      expiries: this.expiries,
      shares: this.shares,
      usage: this.usage,
    });
  }

  /** Makes `owner` the batches' owner, a key whose day is held to `perDay` tokens. */
  meter(owner: string, perDay: number): void {
    this.owner = owner;
    this.config = {
      ...this.config,
      apiKeys: [...this.config.apiKeys, { name: owner, sha256: '00'.repeat(32), tokenLimit: { perDay } }],
    };
  }

  runner(): BatchRunner {
    return this.compose().runner;
  }

  async createBatch(ids: string[], withImages = false, content = input(ids, withImages)): Promise<string> {
    const id = 'batch_0123456789abcdef01234567';
    await this.records.create(
      newBatchRecord({
        id,
        owner: this.owner,
        endpoint: '/v1/chat/completions',
        input_file_id: this.files.put(content),
        completion_window: '24h',
        metadata: null,
        created_at: 0,
        expires_at: Math.floor(Date.now() / 1000) + 3600,
      }),
    );
    return id;
  }

  /** What workers do: every queued line finishes, its images are released, and its result goes to the batch. */
  async runQueuedLines(): Promise<void> {
    for (const [jobId, job] of [...this.queue.jobs]) {
      this.queue.jobs.delete(jobId);
      await this.images.release(jobId, jobImageHashes(job));
      const ref = job.batch!;
      await this.lines.pushResult(ref.batchId, {
        ok: true,
        customId: ref.customId,
        line: ref.line,
        requestId: jobId,
        model: MODEL,
        reply: {
          choices: [{ index: 0, text: `reply ${ref.customId}`, finishReason: 'stop' }],
          usage: { promptTokens: 5, completionTokens: 1, cachedTokens: 3 },
        },
        finishedAt: 1_700_000_000_000,
      });
    }
  }

  async runToEnd(driver: BatchRunner, id: string, maxTicks = 100): Promise<BatchRecord> {
    for (let i = 0; i < maxTicks && this.records.activeIds.has(id); i++) {
      await driver.tick();
      await this.runQueuedLines();
      jest.advanceTimersByTime(100);
    }
    return this.records.records.get(id)!;
  }

  writtenIds(record: BatchRecord): string[] {
    return [...this.files.lines(record.output_file_id), ...this.files.lines(record.error_file_id)].map(
      (l) => l.custom_id,
    );
  }
}

/**
 * A fresh harness for one test, on fake timers from 1_700_000_000_000, with the runner's warnings and errors
 * kept out of the test's output; `stopHarness` after each test undoes both.
 */
export function startHarness(env: Record<string, string> = {}): BatchRunnerHarness {
  jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  jest.useFakeTimers({ now: 1_700_000_000_000 });
  return new BatchRunnerHarness(env);
}

export function stopHarness(): void {
  jest.useRealTimers();
  jest.restoreAllMocks();
}
