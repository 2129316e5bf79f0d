import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { LocalFileStore } from '@conveyor/batch-store';
import { loadConfig, type PlatformConfig } from '@conveyor/config';
import type { BatchEndpointUrl } from '@conveyor/openai';
import { batchLineJobId, newBatchId, type BatchLineResult, type QueuedJobData } from '@conveyor/queue';
import { TokenQuota } from '../auth/token-quota.service.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import type { BatchEndpoint, BatchEndpoints } from '../contracts/batch-endpoint.js';
import type { JobQueue } from '../contracts/job-queue.port.js';
import { JobRouting } from '../generation/job-routing.service.js';
import { PlatformMetrics } from '../metrics/platform-metrics.service.js';
import { FileStoreCheck } from '../platform/file-store.check.js';
import { apiRedis } from '../repositories/api-redis.js';
import { BatchLineRepository } from '../repositories/batch-line.repository.js';
import { BatchShareRepository } from '../repositories/batch-share.repository.js';
import { BatchRepository } from '../repositories/batch.repository.js';
import { newBatchRecord } from '../repositories/batch-record.js';
import { OPENAI_BATCH_RESULTS } from '../dialects/openai-batch.dialect.js';
import { ImageStore } from '../repositories/image-store.port.js';
import { LiveWorkers } from '../repositories/live-workers.port.js';
import { TokenQuotaRepository } from '../repositories/token-quota.repository.js';
import { StoreIdentities } from '../repositories/store-identities.port.js';
import { WorkerRoutes, type RoutePick } from '../repositories/worker-routes.port.js';
import { MemoryOutbox, MemoryUnqueued } from '../../../../test/support/batch-fakes.js';
import { composeBatchRunner } from '../../../../test/support/batch-runner.js';
import type { CommandConnection } from '@conveyor/redis';
import { configuredKeys } from '../../../../test/support/api-key-fakes.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The chat route as a batch sees it, reduced to what feeding lines and collecting results use. */
const endpoint: BatchEndpoint = {
  parse: () => ({
    model: 'conveyor-tiny',
    check: () => undefined,
    toJob: (requestId, deployment) => ({
      requestId,
      deployment: deployment.id,
      messages: [{ role: 'user', content: 'Hi' }],
      sampling: { temperature: 0 },
      stop: [],
      enqueuedAt: Date.now(),
    }),
  }),
  idPrefix: 'chatcmpl-',
  route: '/v1/chat/completions',
  operation: 'chat',
  toResponse: (who, reply) => ({ id: who.id, text: reply.choices[0]?.text }),
  batchResults: OPENAI_BATCH_RESULTS,
};
const endpoints = { '/v1/chat/completions': endpoint } as Record<BatchEndpointUrl, BatchEndpoint> as BatchEndpoints;

const result = (batchId: string, customId: string, line: number): BatchLineResult => ({
  ok: true,
  customId,
  line,
  requestId: batchLineJobId(batchId, line),
  model: 'conveyor-tiny',
  reply: {
    choices: [{ index: 0, text: `reply ${line}`, finishReason: 'stop' }],
    usage: { promptTokens: 1, completionTokens: 2 },
  },
});

class SameStore extends StoreIdentities {
  async hold(identity: string): Promise<string> {
    return identity;
  }
  async release(): Promise<void> {}
}

class NoRoutes extends WorkerRoutes {
  async pick(): Promise<RoutePick> {
    return { outcome: 'miss' };
  }
}

/** These lines carry no images. */
class NoImages extends ImageStore {
  async hold(): Promise<void> {}
  async release(): Promise<void> {}
}

class NoWorkers extends LiveWorkers {
  async counts(deployments: readonly string[]): Promise<Map<string, number>> {
    return new Map(deployments.map((d) => [d, 0]));
  }
  async count(): Promise<number> {
    return 0;
  }
}

const CONNECTION_LOST = "Stream isn't writeable and enableOfflineQueue options is false";

describe('BatchRunner when Redis fails half-way through a pass', () => {
  let config: PlatformConfig;
  let redis: Redis;
  let dir: string;
  let store: LocalFileStore;
  let batches: BatchRepository;
  let lines: BatchLineRepository;
  let connection: CommandConnection;

  beforeAll(() => {
    Logger.overrideLogger(false);
    config = loadConfig({ REDIS_URL: url, REDIS_PREFIX: `unit-${randomBytes(6).toString('hex')}` });
    redis = new Redis(url);
    dir = mkdtempSync(join(tmpdir(), 'conveyor-batch-runner-'));
    store = new LocalFileStore(dir);
    connection = apiRedis(config);
    batches = new BatchRepository(config, connection);
    lines = new BatchLineRepository(config, connection);
  });

  afterAll(async () => {
    await connection.onApplicationShutdown();
    const keys = await redis.keys(`${config.redis.prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  /** An in_progress batch of `customIds`, its lines up to `fedLine` already handed to the queue. */
  const createBatch = async (customIds: string[], fedLine: number) => {
    const input = await store.save(
      { filename: 'in.jsonl', purpose: 'batch', owner: 'o' },
      Readable.from(
        customIds.map(
          (c) => `${JSON.stringify({ custom_id: c, method: 'POST', url: '/v1/chat/completions', body: {} })}\n`,
        ),
      ),
      1 << 20,
    );
    const output = await store.create({ filename: 'out.jsonl', purpose: 'batch_output', owner: 'o' });
    const id = newBatchId();
    const now = Math.floor(Date.now() / 1000);
    await batches.create({
      ...newBatchRecord({
        id,
        owner: 'o',
        endpoint: '/v1/chat/completions',
        input_file_id: input.id,
        completion_window: '24h',
        metadata: null,
        created_at: now,
        expires_at: now + 86_400,
      }),
      status: 'in_progress',
      in_progress_at: now,
      output_file_id: output.id,
      total: customIds.length,
      fed_line: fedLine,
    });
    return { id, outputId: output.id };
  };

  const runner = (queue: Partial<JobQueue>) => {
    const registry = new DeploymentRegistry(config);
    const jobs = { onReconnect: () => undefined, exists: async () => true, ...queue } as JobQueue;
    const metrics = new PlatformMetrics(registry, jobs, new NoWorkers(), batches);
    return composeBatchRunner({
      config,
      endpoints,
      records: batches,
      lines,
      store,
      queue: jobs,
      registry,
      storeCheck: new FileStoreCheck(config, store, new SameStore()),
      metrics,
      routing: new JobRouting(registry, new NoRoutes(), metrics),
      workers: new NoWorkers(),
      images: new NoImages(),
      unqueued: new MemoryUnqueued(),
      quota: new TokenQuota(configuredKeys(config), new TokenQuotaRepository(config, connection)),
      outbox: new MemoryOutbox(),
      shares: new BatchShareRepository(config, connection),
    }).runner;
  };

  it('writes every line once and counts it once when a pass fails after writing its results', async () => {
    const { id, outputId } = await createBatch(['a', 'b'], 2);
    for (const [customId, line] of [
      ['a', 1],
      ['b', 2],
    ] as const) {
      await lines.addInflight(id, line, { customId, deployment: 'conveyor-tiny' });
      await lines.pushResult(id, result(id, customId, line));
    }
    // Redis goes away right after the results are written to the output file, before they are committed.
    const commit = lines.commit.bind(lines);
    let failures = 1;
    lines.commit = async (...args) => {
      if (failures-- > 0) throw new Error(CONNECTION_LOST);
      return commit(...args);
    };
    const batchRunner = runner({});
    try {
      await batchRunner.tick();
      expect(await lines.pendingResultCount(id)).toBe(2);
      await batchRunner.tick();
      await batchRunner.tick();

      const written = (await new Response(await store.read(outputId)).text())
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { custom_id: string }).custom_id);
      expect(written.sort()).toEqual(['a', 'b']);
      expect(await batches.get(id)).toMatchObject({ status: 'completed', completed: 2, failed: 0 });
    } finally {
      lines.commit = commit;
      await batchRunner.onApplicationShutdown();
    }
  });

  it('queues every line when a pass fails half-way through feeding them', async () => {
    const { id } = await createBatch(['a', 'b', 'c'], 0);
    const queued: string[] = [];
    let failures = 1;
    // Redis goes away as the second line's job is being queued: the pass stops there.
    const batchRunner = runner({
      enqueue: async (job: QueuedJobData) => {
        if (job.batch?.customId === 'b' && failures-- > 0) throw new Error(CONNECTION_LOST);
        queued.push(job.batch?.customId ?? '');
      },
    });
    try {
      await batchRunner.tick();
      expect(queued).toEqual(['a']);
      await batchRunner.tick();
      // Line a is queued again (under the same job id: BullMQ adds nothing); b is not skipped.
      expect(queued).toEqual(['a', 'a', 'b', 'c']);
      expect([...(await lines.inflight(id)).values()].map((l) => l.customId).sort()).toEqual(['a', 'b', 'c']);
    } finally {
      await batchRunner.onApplicationShutdown();
    }
  });
});
