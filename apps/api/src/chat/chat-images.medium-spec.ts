import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { loadConfig, type PlatformConfig } from '@conveyor/config';
import { deploymentQueueName, imageJobsKey, imageKey, type GenerationJobData } from '@conveyor/queue';
import { ChatCompletionRequestDto, checkGeneration } from '@conveyor/protocol';
import { TokenQuota } from '../auth/token-quota.service.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { BullMqJobQueue } from '../generation/bullmq-job-queue.adapter.js';
import { parseRequest } from '../generation/parse-request.js';
import { RedisReplyRelay } from '../generation/redis-reply-relay.adapter.js';
import { PlatformMetrics } from '../metrics/platform-metrics.service.js';
import { AdmissionRepository } from '../repositories/admission.repository.js';
import { apiRedis } from '../repositories/api-redis.js';
import { ImageRepository } from '../repositories/image.repository.js';
import { LiveWorkers } from '../repositories/live-workers.port.js';
import { TokenQuotaRepository } from '../repositories/token-quota.repository.js';
import { WorkerRoutes, type RoutePick } from '../repositories/worker-routes.port.js';
import { ChatService } from './chat.service.js';
import { untilConnected } from '../../../../test/support/connected.js';
import type { CommandConnection } from '@conveyor/redis';
import { InMemoryUsage } from '../../../../test/support/generation-fakes.js';
import { generationPipeline } from '../../../../test/support/generation-pipeline.js';
import { configuredKeys } from '../../../../test/support/api-key-fakes.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

class NoRoutes extends WorkerRoutes {
  async pick(): Promise<RoutePick> {
    return { outcome: 'miss' };
  }
}

class NoWorkers extends LiveWorkers {
  async count(): Promise<number> {
    return 0;
  }
  async counts(deployments: readonly string[]): Promise<Map<string, number>> {
    return new Map(deployments.map((d) => [d, 0]));
  }
}

/** Resolves once the store answers: releasing what no job holds changes nothing. */
const connected = (store: ImageRepository) => untilConnected(() => store.release('probe', ['0'.repeat(64)]));

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const part = (bytes: Buffer, type: string) => ({
  type: 'image_url',
  image_url: { url: `data:${type};base64,${bytes.toString('base64')}` },
});

/**
 * The chat use case over the real queue, admission and image store, on a deployment whose model reads
 * images (the deployments a vision engine serves): what lands in Redis for an image request.
 */
describe('chat requests with images, queued in real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  let config: PlatformConfig;
  let redis: Redis;
  let queue: BullMqJobQueue;
  let relay: RedisReplyRelay;
  let admission: AdmissionRepository;
  let images: ImageRepository;
  let chat: ChatService;
  let connection: CommandConnection;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    const base = loadConfig({ REDIS_URL: url, REDIS_PREFIX: prefix, MODEL: 'tiny' });
    config = { ...base, deployments: [{ ...base.deployments[0]!, vision: true }] };
    redis = new Redis(url);
    const registry = new DeploymentRegistry(config);
    connection = apiRedis(config);
    queue = new BullMqJobQueue(config, connection);
    relay = new RedisReplyRelay(config, connection);
    relay.onModuleInit();
    admission = new AdmissionRepository(config, connection);
    images = new ImageRepository(config, connection);
    const workers = new NoWorkers();
    const metrics = new PlatformMetrics(registry, queue, workers, { active: async () => [], get: async () => null });
    const quota = new TokenQuota(configuredKeys(config), new TokenQuotaRepository(config, connection));
    const { service: generation } = generationPipeline({
      config,
      registry,
      queue,
      relay,
      workers,
      metrics,
      places: admission,
      routes: new NoRoutes(),
      images,
      usage: new InMemoryUsage(),
      quota,
    });
    chat = new ChatService(generation);
    // Their connections queue nothing while they connect (requests are refused at once instead): wait for them.
    await connected(images);
    while (!queue.reachable) await new Promise((r) => setTimeout(r, 20));
  });

  afterAll(async () => {
    await relay.onApplicationShutdown();
    await queue.onApplicationShutdown();
    await connection.onApplicationShutdown();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('queues a job that refers to its images, stored once each, and releases them when the client leaves', async () => {
    const model = config.deployments[0]!.id;
    const dto = parseRequest(ChatCompletionRequestDto, {
      model,
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'What are these?' }, part(PNG, 'image/png'), part(GIF, 'image/gif')],
        },
        { role: 'assistant', content: 'Two dots.' },
        { role: 'user', content: [part(PNG, 'image/png'), { type: 'text', text: 'And this one again?' }] },
      ],
      stream: true,
    });
    const client = new AbortController();
    const run = await chat.start(dto, { caller: 'anonymous', signal: client.signal, deadlineMs: null });
    const requestId = run.who.id.slice('chatcmpl-'.length);

    // BullMQ's own record of the job, as a worker will read it.
    const raw = await redis.hget(`${prefix}:${deploymentQueueName(model)}:${requestId}`, 'data');
    expect(raw).not.toBeNull();
    expect(raw).not.toContain(PNG.toString('base64'));
    expect(raw!.length).toBeLessThan(2000);
    const job = JSON.parse(raw!) as GenerationJobData;
    // The images as the route decoded them: the same body checked again decodes the same.
    const [png, gif] = checkGeneration(dto, config.deployments[0]!, config.api.images)
      .images()
      .map((i) => i.ref);
    expect(job.messages[0]!.parts).toEqual([
      { type: 'text', text: 'What are these?' },
      { type: 'image', image: png },
      { type: 'image', image: gif },
    ]);
    expect(job.messages[2]!.parts).toEqual([
      { type: 'image', image: png },
      { type: 'text', text: 'And this one again?' },
    ]);

    // Each image once, by its hash, with the job that refers to it.
    for (const [ref, bytes] of [
      [png!, PNG],
      [gif!, GIF],
    ] as const) {
      expect((await redis.getBuffer(imageKey(prefix, ref.sha256)))?.equals(bytes)).toBe(true);
      expect(await redis.smembers(imageJobsKey(prefix, ref.sha256))).toEqual([requestId]);
    }
    expect(await redis.keys(`${prefix}:image:*`)).toHaveLength(4);

    // No worker took it; the client leaves: the job is taken back, and its images go with it.
    const reading = run.events.next().catch(() => undefined);
    client.abort();
    await reading;
    expect(await redis.exists(`${prefix}:${deploymentQueueName(model)}:${requestId}`)).toBe(0);
    expect(await redis.keys(`${prefix}:image:*`)).toEqual([]);
  });
});
