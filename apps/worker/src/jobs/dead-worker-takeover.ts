import { Logger } from '@nestjs/common';
import { BullTakeOver, type TakenBack } from '@conveyor/bullmq-seam';
import type { PlatformConfig } from '@conveyor/config';
import {
  affinityQueueName,
  deploymentQueueName,
  isBatchLinePriority,
  workerBeatsClockKey,
  workerBeatsKey,
} from '@conveyor/queue';
import type { RedisClient } from '@conveyor/redis';
import type { AdmissionPlaces } from '../admission/admission-places.port.js';
import { LAPSE_BEATS } from '../presence/heartbeat.js';
import { instanceTokenPrefix, routeNameOfInstance } from '../presence/worker-identity.js';

/**
 * Takes over the jobs of a deployment's dead workers as soon as their heartbeat lapses, instead of
 * when BullMQ finds their locks lapsed (WORKER_LOCK_MS, then up to two stalled checks: about a minute
 * by default). For each process whose heartbeat lapsed, the jobs it held in the deployment's queue and
 * in its own queue go back to waiting (BullTakeOver), then its heartbeat is removed. Every live worker
 * looks, and the script gives each job to one of them.
 *
 * A lapse is only believed once the deployment's heartbeats have been landing steadily for a whole
 * lapse (scripts/lapsed-instances.lua): after an outage, restart or failover of the Redis (or the cluster shard) that holds
 * them, every heartbeat is old, and the live workers need that long to beat again. Judged in Redis,
 * not by this worker's connection: on a cluster one shard fails over while the connection stays up.
 */
export class DeadWorkerTakeover {
  private readonly logger = new Logger(DeadWorkerTakeover.name);
  private readonly jobs: BullTakeOver;

  constructor(
    private readonly redis: RedisClient,
    private readonly config: PlatformConfig,
    private readonly deployments: readonly string[],
    private readonly self: string,
    private readonly places: AdmissionPlaces,
  ) {
    this.jobs = new BullTakeOver(redis);
  }

  private get lapseMs(): number {
    return this.config.worker.heartbeatMs * LAPSE_BEATS;
  }

  /** One look at every served deployment's heartbeats. */
  async check(): Promise<void> {
    const prefix = this.config.redis.prefix;
    for (const deployment of this.deployments) {
      const beats = workerBeatsKey(prefix, deployment);
      const clock = workerBeatsClockKey(prefix, deployment);
      for (const instance of await this.redis.lapsedInstances(beats, clock, this.lapseMs)) {
        if (instance === this.self) continue;
        const queues = [deploymentQueueName(deployment), affinityQueueName(deployment, routeNameOfInstance(instance))];
        for (const queue of queues) {
          const moved = await this.takeOver(queue, instance);
          if (!moved.length) continue;
          this.logger.warn(
            `Took over ${moved.map((m) => m.id).join(', ')} from dead worker ${instance}: back to waiting in ${queue}`,
          );
          // Waiting again as requests admitted to the queue, in any service tier's band; batch lines and jobs
          // about to fail hold no place.
          const waiting = moved.filter((m) => !isBatchLinePriority(m.priority) && !m.failing).map((m) => m.id);
          await this.places.waitAgain(deployment, waiting);
        }
        await this.redis.forgetInstance(beats, instance);
      }
    }
  }

  /** The jobs of `queue` that the dead process `instance` held, moved back to waiting. */
  async takeOver(queue: string, instance: string): Promise<TakenBack[]> {
    return this.jobs.jobsOf(
      this.config.redis.prefix,
      queue,
      instanceTokenPrefix(instance),
      this.config.worker.maxStalls,
    );
  }
}
