import { Inject, Injectable } from '@nestjs/common';
import { countByPriority, type BandCounts } from '@conveyor/bullmq-seam';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import {
  BATCH_LINE_PRIORITY,
  activeBatchesKey,
  affinityQueueName,
  batchUnqueuedKey,
  bullPriorityOf,
  deploymentQueueName,
  routeQueuesKey,
} from '@conveyor/queue';
import { CommandConnection, type RedisClient } from '@conveyor/redis';

import { PendingWork, type DeploymentWork } from './pending-work.port.js';

/**
 * The bounds of the queue's priority bands: `default` requests below flex's priority (`priority` ones
 * wait unprioritized, in BullMQ's wait list), `flex` below a batch line's, batch lines from it.
 */
const BAND_BOUNDS = [bullPriorityOf({ tier: 'flex' }), BATCH_LINE_PRIORITY] as const;

/** A queue's counts read as the platform's bands. */
interface QueueParts {
  wait: number;
  default: number;
  flex: number;
  batch: number;
  delayed: number;
  active: number;
}

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
      waiting: shared.wait + shared.default + shared.flex + shared.delayed,
      batchQueued: shared.batch,
      routed: routed.reduce((sum, q) => sum + q.wait + q.default + q.flex + q.batch + q.delayed, 0),
      running: routed.reduce((sum, q) => sum + q.active, shared.active),
      batchUnqueued,
      waitingByTier: { priority: shared.wait, default: shared.default, flex: shared.flex, batch: shared.batch },
    };
  }

  /** A queue's jobs not finished, counted in one transaction, so a job moving between states is counted once. */
  private async parts(name: string): Promise<QueueParts> {
    const counts: BandCounts = await countByPriority(this.redis, this.config.redis.prefix, name, BAND_BOUNDS);
    const [low = 0, flex = 0, batch = 0] = counts.bands;
    return { wait: counts.wait, default: low, flex, batch, delayed: counts.delayed, active: counts.active };
  }
}
