import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { PlatformConfig } from '@conveyor/config';
import type { CommandConnection } from '@conveyor/redis';
import { workerRedis } from '../worker-redis.js';
import { batchResultsKey, type BatchLineResult, type GenerationJobData, type ReplyEvent } from '@conveyor/queue';
import { RedisBatchResultSink } from '../batch/redis-batch-result.sink.js';
import { ImageReleaser } from '../images/image-releaser.port.js';
import { ReplyStreams } from '../reply/reply-streams.port.js';
import { REPLY_CONFIG } from '../../../../test/support/reply-streams.js';
import { EVENTUALLY_MS, waitFor } from '../../../../test/support/jobs.js';
import type { ReplySink } from '../reply/reply-sink.js';
import { ReplySinks } from './reply-sinks.js';
import { UnrunFailures } from './unrun-failures.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const connection = { host: new URL(url).hostname, port: Number(new URL(url).port || 6379), maxRetriesPerRequest: null };

class NoImages extends ImageReleaser {
  async release(): Promise<void> {}
}

class NoStreams extends ReplyStreams {
  async history(): Promise<ReplyEvent[]> {
    throw new Error('not read');
  }

  open(): ReplySink {
    throw new Error('a batch line has no reply stream');
  }

  roundEnded(): void {}
}

/**
 * The report a batch line gets when the workers running it die more often than allowed: BullMQ
 * fails such a job in the next worker's fetch, without running it, and only that worker can tell
 * the batch (the API reports no batch line).
 */
describe('UnrunFailures with real BullMQ and Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  let redis: Redis;
  let queue: Queue<GenerationJobData>;
  let results: RedisBatchResultSink;
  let sinkConnection: CommandConnection;
  const workers: Worker[] = [];

  beforeAll(() => {
    Logger.overrideLogger(false);
    redis = new Redis(url);
    queue = new Queue<GenerationJobData>('gen', { connection, prefix });
    // Only the Redis settings are read by the sink.
    const config = { redis: { url, prefix } } as PlatformConfig;
    sinkConnection = workerRedis(config);
    results = new RedisBatchResultSink(config, sinkConnection);
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await queue.obliterate({ force: true });
    await queue.close();
    await sinkConnection.onApplicationShutdown();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('hands the line’s failure to its batch from the worker that fetches it', async () => {
    const batch = { batchId: 'batch_0123456789abcdef01234567', customId: 'line-d', line: 4 };
    const requestId = `${batch.batchId}-${batch.line}`;
    const data: GenerationJobData = {
      requestId,
      deployment: 'alpha',
      messages: [{ role: 'user', content: 'hi' }],
      sampling: { temperature: 0 },
      stop: [],
      enqueuedAt: Date.now(),
      batch,
    };
    await queue.add('generate', data, { jobId: requestId, attempts: 2, removeOnFail: true });

    // A worker takes the line and dies with it: its lock is never renewed, the job never finished.
    const dead = new Worker('gen', null, { connection, prefix, lockDuration: 200, maxStalledCount: 0, autorun: false });
    workers.push(dead);
    expect((await dead.getNextJob('token-of-the-dead'))?.id).toBe(requestId);
    await new Promise((r) => setTimeout(r, 400));

    let ran = false;
    const live = new Worker(
      'gen',
      async () => {
        ran = true;
      },
      { connection, prefix, stalledInterval: 100, maxStalledCount: 0 },
    );
    workers.push(live);
    new UnrunFailures(new NoImages(), new ReplySinks(REPLY_CONFIG, new NoStreams(), results)).watch(live);

    const key = batchResultsKey(prefix, batch.batchId);
    const pushed = await waitFor(
      async () => {
        const lines = await redis.lrange(key, 0, -1);
        return lines.length ? lines : undefined;
      },
      EVENTUALLY_MS,
      "the line's failure pushed to its batch",
    );
    expect(ran).toBe(false);
    expect(pushed.map((p) => JSON.parse(p) as BatchLineResult)).toEqual([
      {
        ok: false,
        customId: 'line-d',
        line: 4,
        requestId,
        model: 'alpha',
        status: 500,
        code: 'generation_failed',
        message: 'Generation failed: job stalled more than allowable limit',
        finishedAt: expect.any(Number),
      },
    ]);
  });
});
