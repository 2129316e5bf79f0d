import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { countSplitAtPriority } from '@conveyor/bullmq-seam';
import { Cluster } from 'ioredis';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import {
  BATCH_LINE_PRIORITY,
  CANCEL_TTL_MS,
  affinityQueueName,
  bullPriorityOf,
  cancelChannel,
  cancelsKey,
  deploymentQueueName,
  jobNameOf,
  routeQueuesKey,
  type QueuedJobData,
} from '@conveyor/queue';
import { CommandConnection, QueueSet, type RedisClient } from '@conveyor/redis';
import { bullMqTelemetry } from '@conveyor/telemetry';
import { JobQueue, type JobCounts } from '../contracts/job-queue.port.js';

/**
 * The job queue on BullMQ: one queue per deployment, carrying every kind of job for it, and beside
 * it one per worker for the jobs routed to that worker (see JobRouting). A job is only ever moved
 * from a worker's queue to its deployment's, added there before it leaves the first: so a job is
 * looked for in the workers' queues first, and then in the deployment's, where it is if it has moved.
 * Every queue sends its commands on the API's one command connection: a queue only adds, reads and
 * removes jobs (no blocking reads), and BullMQ leaves a connection it was given open when it closes.
 */
@Injectable()
export class BullMqJobQueue extends JobQueue implements OnApplicationShutdown {
  private readonly logger = new Logger(BullMqJobQueue.name);
  private readonly queues: QueueSet<QueuedJobData>;
  private readonly redis: RedisClient;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
    this.queues = new QueueSet(redis, config.redis.prefix, (message) => this.logger.warn(message), bullMqTelemetry);
  }

  get reachable(): boolean {
    return this.redis.status === 'ready';
  }

  private queueNamed(name: string): Queue<QueuedJobData> {
    return this.queues.get(name);
  }

  private queueFor(deployment: string): Queue<QueuedJobData> {
    return this.queueNamed(deploymentQueueName(deployment));
  }

  /** The deployment's workers' own queues, then its queue: the order a moving job is sure to be found in. */
  private async searchOrder(deployment: string): Promise<Queue<QueuedJobData>[]> {
    const workers = await this.redis.smembers(routeQueuesKey(this.config.redis.prefix, deployment));
    return [...workers.map((w) => this.queueNamed(affinityQueueName(deployment, w))), this.queueFor(deployment)];
  }

  /**
   * Every deployment's queue and, beside it, the queues of the workers routing sends its jobs to, for
   * the queue dashboard: a routed job waits in its worker's queue, not in the deployment's.
   */
  async all(): Promise<Queue<QueuedJobData>[]> {
    const orders = await Promise.all(this.config.deployments.map((d) => this.searchOrder(d.id)));
    return orders.flatMap((queues) => [queues[queues.length - 1]!, ...queues.slice(0, -1)]);
  }

  async enqueue(job: QueuedJobData, worker?: string | null): Promise<void> {
    const queue = worker ? this.queueNamed(affinityQueueName(job.deployment, worker)) : this.queueFor(job.deployment);
    // One queue per deployment carries both kinds; the worker routes them by job name. Its service
    // tier's band (or a batch line's) is its BullMQ priority: 0, the `priority` band's, is none.
    const priority = bullPriorityOf(job);
    await queue.add(jobNameOf(job), job, {
      jobId: job.requestId,
      attempts: 2,
      backoff: { type: 'fixed', delay: 100 },
      ...(priority ? { priority } : {}),
      ...(job.batch
        ? // A batch line's result goes to its batch's files; the job itself need not outlive it.
          { removeOnComplete: true, removeOnFail: true }
        : {
            removeOnComplete: { age: this.config.redis.jobRetentionSeconds, count: 10000 },
            removeOnFail: { age: Math.max(this.config.redis.jobRetentionSeconds, 24 * 3600) },
          }),
    });
  }

  async cancel(deployment: string, requestId: string): Promise<boolean> {
    let removed = false;
    try {
      // A job still waiting is removed; one a worker holds the lock of is not, and the cancel below stops
      // it there. Removing after the cancel instead would delete the job's record of it once the worker
      // had failed it, which a worker that stops quickly could do first.
      for (const queue of await this.searchOrder(deployment)) {
        removed = (await queue.remove(requestId).catch(() => 0)) === 1 || removed;
      }
      // Marked (lapsed marks trimmed) and published at once: a worker that subscribes later reads the mark.
      const now = Date.now();
      const cancels = cancelsKey(this.config.redis.prefix);
      await this.redis
        .multi()
        .zadd(cancels, now + CANCEL_TTL_MS, requestId)
        .zremrangebyscore(cancels, '-inf', now)
        .publish(cancelChannel(this.config.redis.prefix), requestId)
        .exec();
    } catch (err) {
      this.logger.warn(`Could not cancel ${requestId}: ${(err as Error).message}`);
    }
    return removed;
  }

  async find(requestId: string): Promise<QueuedJobData | null> {
    for (const deployment of this.config.deployments) {
      for (const queue of await this.searchOrder(deployment.id)) {
        const job = await queue.getJob(requestId);
        if (job) return job.data;
      }
    }
    return null;
  }

  async counts(deployment: string): Promise<JobCounts> {
    // Every service tier but `priority` is prioritized in BullMQ too: batch lines are told apart by their priority.
    const c = await countSplitAtPriority(
      this.redis,
      this.config.redis.prefix,
      deploymentQueueName(deployment),
      BATCH_LINE_PRIORITY,
    );
    return { waiting: c.wait + c.before, batch: c.from, active: c.active };
  }

  async countsByState(deployment: string): Promise<Record<string, number>> {
    return this.queueFor(deployment).getJobCounts();
  }

  async exists(deployment: string, jobId: string): Promise<boolean> {
    for (const queue of await this.searchOrder(deployment)) {
      if ((await queue.getJobState(jobId)) !== 'unknown') return true;
    }
    return false;
  }

  async withdraw(deployment: string, requestId: string): Promise<boolean> {
    // BullMQ refuses to remove a job a worker holds the lock of, so this never pulls a running job.
    for (const queue of await this.searchOrder(deployment)) {
      if ((await queue.remove(requestId).catch(() => 0)) === 1) return true;
    }
    return false;
  }

  onReconnect(listener: () => void): void {
    if (this.redis instanceof Cluster) return onFailover(this.redis, listener);
    // Every connection drops in an outage; this one's first 'ready' after it says Redis answers again.
    let connected = this.redis.status === 'ready';
    this.redis.on('ready', () => {
      if (connected) listener();
      connected = true;
    });
  }

  onApplicationShutdown(): Promise<void> {
    return this.queues.close();
  }
}

/**
 * A Cluster client stays ready while one shard fails over, so its readiness says nothing. The
 * primaries it learns each time it reads the slots (when a command meets a dead node, and every few
 * seconds) do: a new one among them is a replica that took over, and what the old one had
 * acknowledged may be gone.
 */
function onFailover(cluster: Cluster, listener: () => void): void {
  const primaries = () =>
    new Set(cluster.slots.map((nodes) => nodes[0]).filter((node): node is string => node !== undefined));
  let known: Set<string> | null = null;
  cluster.on('refresh', () => {
    const now = primaries();
    const promoted = known !== null && [...now].some((node) => !known!.has(node));
    known = now;
    if (promoted) listener();
  });
}
