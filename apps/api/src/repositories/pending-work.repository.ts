import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import {
  activeBatchesKey,
  affinityQueueName,
  batchUnqueuedKey,
  deploymentQueueName,
  routeQueuesKey,
} from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';

import { PendingWork, type DeploymentWork } from './pending-work.port.js';

/** One queue's unfinished jobs, by state. */
interface QueueParts {
  waiting: number;
  prioritized: number;
  delayed: number;
  active: number;
}

const STATES = ['waiting', 'prioritized', 'delayed', 'active'] as const;

/**
 * The work of each deployment, from Redis: its queue's and its workers' queues' jobs by state, and the
 * lines of running batches not yet queued. Every read names keys of one deployment (a queue's counts
 * are BullMQ's own, read in one script, as BullMQ keeps a queue in one hash slot), so it works alike on
 * one Redis and on a cluster; deployments are read side by side, never in one multi-key command.
 */
@Injectable()
export class PendingWorkRepository extends PendingWork implements OnApplicationShutdown {
  private readonly logger = new Logger(PendingWorkRepository.name);
  private readonly redis: RedisClient;
  /** The queues counted so far, on this repository's one connection. */
  private readonly queues = new Map<string, Queue>();

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
  ) {
    super();
    this.redis = redis;
  }

  async of(deployments: readonly string[]): Promise<Map<string, DeploymentWork>> {
    // A batch's counts outlive it only if its replica stopped between ending it and removing them:
    // counting only batches still active keeps such leftovers from holding a pool up.
    const active = new Set(await this.redis.smembers(activeBatchesKey(this.config.redis.prefix)));
    const works = await Promise.all(deployments.map((d) => this.deployment(d, active)));
    return new Map(deployments.map((d, i) => [d, works[i]!]));
  }

  private async deployment(deployment: string, activeBatches: ReadonlySet<string>): Promise<DeploymentWork> {
    const prefix = this.config.redis.prefix;
    const [shared, workers, unqueued] = await Promise.all([
      this.parts(deploymentQueueName(deployment)),
      this.redis.smembers(routeQueuesKey(prefix, deployment)),
      this.redis.hgetall(batchUnqueuedKey(prefix, deployment)),
    ]);
    const names = workers.map((w) => affinityQueueName(deployment, w));
    this.forgetGone(deployment, names);
    const routed = await Promise.all(names.map((name) => this.parts(name)));
    let batchUnqueued = 0;
    // Fields are `<batch id>` (lines left) and `<batch id>:through` (the last line counted).
    for (const [field, left] of Object.entries(unqueued)) {
      if (activeBatches.has(field)) batchUnqueued += Math.max(0, Number(left) || 0);
    }
    return {
      waiting: shared.waiting + shared.delayed,
      batchQueued: shared.prioritized,
      routed: routed.reduce((sum, q) => sum + q.waiting + q.prioritized + q.delayed, 0),
      running: routed.reduce((sum, q) => sum + q.active, shared.active),
      batchUnqueued,
    };
  }

  /** Stops counting the own queues of workers that are gone (their queue deleted): workers come and go. */
  private forgetGone(deployment: string, current: readonly string[]): void {
    const own = `${affinityQueueName(deployment, '')}`;
    for (const [name, queue] of this.queues) {
      if (!name.startsWith(own) || current.includes(name)) continue;
      this.queues.delete(name);
      void queue.close().catch(() => undefined);
    }
  }

  /** A queue's jobs not finished, counted in one script, so a job moving between states is counted once. */
  private async parts(name: string): Promise<QueueParts> {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.redis, prefix: this.config.redis.prefix });
      queue.on('error', (err) => this.logger.warn(`Queue ${name}: ${err.message}`));
      this.queues.set(name, queue);
    }
    const counts = await queue.getJobCounts(...STATES);
    const [waiting = 0, prioritized = 0, delayed = 0, active = 0] = STATES.map((state) => counts[state]);
    return { waiting, prioritized, delayed, active };
  }

  /** The queues go; the connection they share is the process's, closed with it. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
  }
}
