import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import {
  activeBatchesKey,
  affinityQueueName,
  batchUnqueuedKey,
  deploymentQueueName,
  queuePartKey,
  routeQueuesKey,
} from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';

import { PendingWork, type DeploymentWork } from './pending-work.port.js';

/** One queue's unfinished jobs, by the part of the queue they are in. */
interface QueueParts {
  wait: number;
  prioritized: number;
  delayed: number;
  active: number;
}

/**
 * The work of each deployment, from Redis: its queue's and its workers' queues' jobs by state, and the
 * lines of running batches not yet queued. Every read names keys of one deployment (one queue's parts
 * together, in one MULTI, as BullMQ keeps a queue in one hash slot), so it works alike on one Redis and
 * on a cluster; deployments are read side by side, never in one multi-key command.
 */
@Injectable()
export class PendingWorkRepository extends PendingWork {
  private readonly redis: RedisClient;

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
    const routed = await Promise.all(workers.map((w) => this.parts(affinityQueueName(deployment, w))));
    let batchUnqueued = 0;
    // Fields are `<batch id>` (lines left) and `<batch id>:through` (the last line counted).
    for (const [field, left] of Object.entries(unqueued)) {
      if (activeBatches.has(field)) batchUnqueued += Math.max(0, Number(left) || 0);
    }
    return {
      waiting: shared.wait + shared.delayed,
      batchQueued: shared.prioritized,
      routed: routed.reduce((sum, q) => sum + q.wait + q.prioritized + q.delayed, 0),
      running: routed.reduce((sum, q) => sum + q.active, shared.active),
      batchUnqueued,
    };
  }

  /** A queue's jobs not finished, read in one MULTI so a job moving between parts is counted once. */
  private async parts(queue: string): Promise<QueueParts> {
    const key = (part: keyof QueueParts) => queuePartKey(this.config.redis.prefix, queue, part);
    const replies = await this.redis
      .multi()
      .llen(key('wait'))
      .zcard(key('prioritized'))
      .zcard(key('delayed'))
      .llen(key('active'))
      .exec();
    const [wait = 0, prioritized = 0, delayed = 0, active = 0] = (replies ?? []).map(([err, n]) => {
      if (err) throw err;
      return Number(n);
    });
    return { wait, prioritized, delayed, active };
  }
}
