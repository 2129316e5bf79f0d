import { Logger } from '@nestjs/common';
import type { PlatformConfig } from '@conveyor/config';
import { affinityQueueName, deploymentQueueName, workerBeatsClockKey, workerBeatsKey } from '@conveyor/queue';
import type { RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { LAPSE_BEATS } from '../presence/heartbeat.js';
import { instanceTokenPrefix, routeNameOfInstance } from '../presence/worker-identity.js';
import { FORGET, LAPSED, TAKE_OVER } from './takeover-scripts.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    lapsedInstances(beats: string, clock: string, lapseMs: number): Result<string[], Context>;
    forgetInstance(beats: string, instance: string): Result<number, Context>;
    takeOverJobs(
      active: string,
      wait: string,
      prioritized: string,
      meta: string,
      marker: string,
      events: string,
      stalled: string,
      keyPrefix: string,
      tokenPrefix: string,
      maxStalled: number,
    ): Result<string[], Context>;
  }
}

/** BullMQ's keys of one queue that taking its jobs over touches, in TAKE_OVER's order. */
const QUEUE_KEYS = ['active', 'wait', 'prioritized', 'meta', 'marker', 'events', 'stalled'] as const;

/**
 * Takes over the jobs of a deployment's dead workers as soon as their heartbeat lapses, instead of
 * when BullMQ finds their locks lapsed (WORKER_LOCK_MS, then up to two stalled checks: about a minute
 * by default). For each process whose heartbeat lapsed, the jobs it held in the deployment's queue and
 * in its own queue go back to waiting (TAKE_OVER), then its heartbeat is removed. Every live worker
 * looks, and the script gives each job to one of them.
 *
 * A lapse is only believed once the deployment's heartbeats have been landing steadily for a whole
 * lapse (LAPSED): after an outage, restart or failover of the Redis (or the cluster shard) that holds
 * them, every heartbeat is old, and the live workers need that long to beat again. Judged in Redis,
 * not by this worker's connection: on a cluster one shard fails over while the connection stays up.
 */
export class DeadWorkerTakeover {
  private readonly logger = new Logger(DeadWorkerTakeover.name);

  constructor(
    private readonly redis: RedisClient,
    private readonly config: PlatformConfig,
    private readonly deployments: readonly string[],
    private readonly self: string,
  ) {
    redis.defineCommand('lapsedInstances', { numberOfKeys: 2, lua: LAPSED });
    redis.defineCommand('forgetInstance', { numberOfKeys: 1, lua: FORGET });
    redis.defineCommand('takeOverJobs', { numberOfKeys: QUEUE_KEYS.length, lua: TAKE_OVER });
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
          if (moved.length)
            this.logger.warn(`Took over ${moved.join(', ')} from dead worker ${instance}: back to waiting in ${queue}`);
        }
        await this.redis.forgetInstance(beats, instance);
      }
    }
  }

  /** The jobs of `queue` that the dead process `instance` held, moved back to waiting. */
  async takeOver(queue: string, instance: string): Promise<string[]> {
    const keyPrefix = `${this.config.redis.prefix}:${queue}:`;
    const [active, wait, prioritized, meta, marker, events, stalled] = QUEUE_KEYS.map((k) => keyPrefix + k);
    return this.redis.takeOverJobs(
      active!,
      wait!,
      prioritized!,
      meta!,
      marker!,
      events!,
      stalled!,
      keyPrefix,
      instanceTokenPrefix(instance),
      this.config.worker.maxStalls,
    );
  }
}
