import { Inject, Injectable } from '@nestjs/common';
import { countSplitAtPriority, type SplitCounts } from '@conveyor/bullmq-seam';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import {
  BATCH_LINE_PRIORITY,
  activeBatchesKey,
  affinityQueueName,
  batchUnqueuedKey,
  deploymentQueueName,
  routeQueuesKey,
} from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';

import { PendingWork, type DeploymentWork } from './pending-work.port.js';

/**
 * The work of each deployment, from Redis: its queue's and its workers' queues' jobs by state, and the
 * lines of running batches not yet queued. Every read names keys of one deployment (a queue's counts
 * are read in one transaction, as BullMQ keeps a queue in one hash slot), so it works alike on one
 * Redis and on a cluster; deployments are read side by side, never in one multi-key command. Requests of
 * every service tier and batch lines share the queue, told apart by their BullMQ priority.
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
    const names = workers.map((w) => affinityQueueName(deployment, w));
    const routed = await Promise.all(names.map((name) => this.parts(name)));
    let batchUnqueued = 0;
    // Fields are `<batch id>` (lines left) and `<batch id>:through` (the last line counted).
    for (const [field, left] of Object.entries(unqueued)) {
      if (activeBatches.has(field)) batchUnqueued += Math.max(0, Number(left) || 0);
    }
    return {
      waiting: shared.wait + shared.before + shared.delayed,
      batchQueued: shared.from,
      routed: routed.reduce((sum, q) => sum + q.wait + q.before + q.from + q.delayed, 0),
      running: routed.reduce((sum, q) => sum + q.active, shared.active),
      batchUnqueued,
    };
  }

  /** A queue's jobs not finished, counted in one transaction, so a job moving between states is counted once. */
  private parts(name: string): Promise<SplitCounts> {
    return countSplitAtPriority(this.redis, this.config.redis.prefix, name, BATCH_LINE_PRIORITY);
  }
}
