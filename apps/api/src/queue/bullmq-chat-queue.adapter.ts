import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { BATCH_LINE_PRIORITY, CANCEL_TTL_MS, CHAT_JOB, EMBED_JOB, cancelChannel, cancelKey, chatQueueName, isEmbedJob, type ChatJobData, type QueuedJobData } from '@conveyor/queue';
import type { Redis } from 'ioredis';
import { createRedis } from '../platform/redis-connection.factory.js';
import { ChatQueue } from './chat-queue.port.js';

@Injectable()
export class BullChatQueue extends ChatQueue implements OnApplicationShutdown {
  private readonly logger = new Logger(BullChatQueue.name);
  private readonly queues = new Map<string, Queue<ChatJobData>>();
  private readonly redis: Redis;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    super();
    this.redis = createRedis(config.redis.url, 'conveyor-api-commands');
  }

  private queueFor(deployment: string): Queue<ChatJobData> {
    let queue = this.queues.get(deployment);
    if (!queue) {
      queue = new Queue<ChatJobData>(chatQueueName(deployment), {
        connection: { url: this.config.redis.url, enableOfflineQueue: false, maxRetriesPerRequest: 2 },
        prefix: this.config.redis.prefix,
      });
      queue.on('error', (err) => this.logger.warn(`Queue ${deployment}: ${err.message}`));
      this.queues.set(deployment, queue);
    }
    return queue;
  }

  /** Every deployment's queue, for the queue dashboard. */
  all(): Queue<ChatJobData>[] {
    return this.config.deployments.map((d) => this.queueFor(d.id));
  }

  async enqueue(job: QueuedJobData): Promise<void> {
    // One queue per deployment carries both kinds; the worker routes them by job name.
    await (this.queueFor(job.deployment) as Queue<QueuedJobData>).add(isEmbedJob(job) ? EMBED_JOB : CHAT_JOB, job, {
      jobId: job.requestId,
      attempts: 2,
      backoff: { type: 'fixed', delay: 100 },
      ...(job.batch
        ? // A batch line's result goes to its batch's files; the job itself need not outlive it.
          { priority: BATCH_LINE_PRIORITY, removeOnComplete: true, removeOnFail: true }
        : {
            removeOnComplete: { age: this.config.redis.jobRetentionSeconds, count: 10000 },
            removeOnFail: { age: Math.max(this.config.redis.jobRetentionSeconds, 24 * 3600) },
          }),
    });
  }

  async cancel(deployment: string, requestId: string): Promise<void> {
    try {
      // A job still waiting is removed; one a worker holds the lock of is not, and the cancel below stops
      // it there. Removing after the cancel instead would delete the job's record of it once the worker
      // had failed it, which a worker that stops quickly could do first.
      await this.queueFor(deployment).remove(requestId).catch(() => 0);
      await this.redis
        .multi()
        .set(cancelKey(this.config.redis.prefix, requestId), '1', 'PX', CANCEL_TTL_MS)
        .publish(cancelChannel(this.config.redis.prefix), requestId)
        .exec();
    } catch (err) {
      this.logger.warn(`Could not cancel ${requestId}: ${(err as Error).message}`);
    }
  }

  async find(requestId: string): Promise<ChatJobData | null> {
    for (const deployment of this.config.deployments) {
      const job = await this.queueFor(deployment.id).getJob(requestId);
      if (job) return job.data;
    }
    return null;
  }

  async counts(deployment: string): Promise<{ waiting: number; prioritized: number; active: number }> {
    const c = await this.queueFor(deployment).getJobCounts('waiting', 'prioritized', 'active');
    return { waiting: c.waiting ?? 0, prioritized: c.prioritized ?? 0, active: c.active ?? 0 };
  }

  waiting(deployment: string): Promise<number> {
    // Batch lines wait as prioritized jobs, so the plain wait list is exactly the interactive backlog.
    return this.queueFor(deployment).getWaitingCount();
  }

  async withdraw(deployment: string, requestId: string): Promise<boolean> {
    // BullMQ refuses to remove a job a worker holds the lock of, so this never pulls a running job.
    return (await this.queueFor(deployment).remove(requestId).catch(() => 0)) === 1;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    this.redis.disconnect();
  }
}
