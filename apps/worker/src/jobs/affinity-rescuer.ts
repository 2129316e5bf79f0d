import { Logger } from '@nestjs/common';
import { Queue, Worker, type Job } from 'bullmq';
import type { PlatformConfig } from '@conveyor/config';
import {
  affinityQueueName,
  liveWorkersKey,
  routeBlocksKey,
  routeLoadKey,
  routeQueuesKey,
  routeWorkerName,
  type QueuedJobData,
} from '@conveyor/queue';
import {
  MAX_RECONNECT_DELAY_MS,
  QueueSet,
  bullConnection,
  releaseBullConnection,
  type RedisClient,
} from '@conveyor/redis';
import { bullMqTelemetry } from '@conveyor/telemetry';
import type { DeadWorkerTakeover } from './dead-worker-takeover.js';
import type { JobForwarder } from './job-forwarder.js';

/** How long a worker must have been gone before its drained queue is deleted (an API may still be adding to it). */
const DELETE_AFTER_MS = 60_000;

/** Job states of a queue that still need a worker. */
const UNFINISHED = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

/**
 * Empties the own queues of a deployment's workers that are gone (their heartbeat lapsed, or they
 * shut down): every job there is sent on to the deployment's queue, where any live worker takes it.
 * A job that was running when its worker died is first moved back to waiting (DeadWorkerTakeover, in
 * the same pass), as are the jobs it ran from the deployment's queue. Every live worker does this for
 * every gone one, and BullMQ gives each job to one. A queue is deleted once it is empty and its
 * finished jobs' records have aged out. A pass runs twice a heartbeat, so a dead worker's replies go
 * on within about half a beat of its heartbeat lapsing.
 */
export class AffinityRescuer {
  private readonly logger = new Logger(AffinityRescuer.name);
  private readonly rescues = new Map<string, Worker<QueuedJobData>>();
  private readonly queues: QueueSet<QueuedJobData>;
  private readonly goneSince = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  /**
   * `self`: this worker's route name; `redis`: the worker's command connection (each rescue's BullMQ
   * worker has its own, for its blocking fetches); `takeover`: what moves dead workers' running jobs back.
   */
  constructor(
    private readonly config: PlatformConfig,
    private readonly deployments: readonly string[],
    private readonly self: string,
    private readonly forwarder: JobForwarder,
    private readonly redis: RedisClient,
    private readonly takeover: DeadWorkerTakeover,
  ) {
    this.queues = new QueueSet(redis, config.redis.prefix, (message) => this.logger.warn(message), bullMqTelemetry);
  }

  start(): void {
    this.timer = setInterval(
      () => {
        this.running ??= this.check()
          .catch((err: Error) => this.logger.warn(`Could not look for gone workers' jobs: ${err.message}`))
          .finally(() => (this.running = null));
      },
      Math.max(50, this.config.worker.heartbeatMs / 2),
    );
  }

  /**
   * One pass: dead workers' running jobs back to waiting, then for each gone worker's queue, rescue its
   * jobs, or delete it once there is nothing left.
   */
  async check(): Promise<void> {
    await this.takeover.check();
    const prefix = this.config.redis.prefix;
    for (const deployment of this.deployments) {
      const [workers, live] = await Promise.all([
        this.redis.smembers(routeQueuesKey(prefix, deployment)),
        this.redis.zrangebyscore(liveWorkersKey(prefix, deployment), Date.now(), '+inf'),
      ]);
      const alive = new Set(live.map(routeWorkerName));
      for (const worker of workers) {
        if (worker === this.self) continue;
        const name = affinityQueueName(deployment, worker);
        if (alive.has(worker)) {
          // Back (it was frozen, not dead): its queue is its own again.
          this.goneSince.delete(name);
          await this.stopRescue(name);
          continue;
        }
        if (!this.goneSince.has(name)) this.goneSince.set(name, Date.now());
        await this.tend(deployment, worker, name);
      }
    }
  }

  private async tend(deployment: string, worker: string, name: string): Promise<void> {
    const queue = this.queue(name);
    const counts = await queue.getJobCounts(...UNFINISHED, 'completed', 'failed');
    const unfinished = UNFINISHED.reduce((sum, state) => sum + (counts[state] ?? 0), 0);
    if (unfinished > 0) return this.rescue(name);
    await this.stopRescue(name);
    const retention = this.config.redis.jobRetentionSeconds * 1000;
    if ((counts.completed ?? 0) + (counts.failed ?? 0) > 0) {
      // Kept as long as the deployment's queue keeps them, so a finished reply can still be resumed.
      await queue.clean(retention, 1000, 'completed');
      await queue.clean(Math.max(retention, 24 * 3600 * 1000), 1000, 'failed');
      return;
    }
    if (Date.now() - (this.goneSince.get(name) ?? Date.now()) < DELETE_AFTER_MS) return;
    const prefix = this.config.redis.prefix;
    await queue.obliterate({ force: true });
    await this.redis
      .multi()
      .srem(routeQueuesKey(prefix, deployment), worker)
      .hdel(routeLoadKey(prefix, deployment), worker)
      .del(routeBlocksKey(prefix, deployment, worker))
      .exec();
    this.goneSince.delete(name);
    await this.queues.drop(name);
    this.logger.log(`Deleted the drained queue of gone worker ${worker}`);
  }

  private rescue(name: string): void {
    if (this.rescues.has(name)) return;
    const connection = bullConnection(this.config.redis, `conveyor-worker-rescue-${name}`, 'blocking', this.logger);
    const worker = new Worker<QueuedJobData>(
      name,
      (job: Job<QueuedJobData>) => this.forwarder.forward(job, 'its worker is gone'),
      {
        connection,
        prefix: this.config.redis.prefix,
        concurrency: 8,
        lockDuration: this.config.worker.lockMs,
        stalledInterval: this.config.worker.stalledIntervalMs,
        // Sending a job on is safe to repeat: a rescuer dying midway must not fail the job.
        maxStalledCount: 1000,
        runRetryDelay: MAX_RECONNECT_DELAY_MS,
        ...bullMqTelemetry(),
      },
    );
    worker.on('error', (err) => this.logger.warn(`Rescue of ${name}: ${err.message}`));
    worker.on('closed', () => releaseBullConnection(connection));
    this.rescues.set(name, worker);
    this.logger.log(`Sending the jobs of ${name} on to the deployment's queue: its worker is gone`);
  }

  private async stopRescue(name: string): Promise<void> {
    const worker = this.rescues.get(name);
    if (!worker) return;
    this.rescues.delete(name);
    await worker.close();
  }

  private queue(name: string): Queue<QueuedJobData> {
    return this.queues.get(name);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
    await Promise.allSettled([...this.rescues.values()].map((w) => w.close()));
    await this.queues.close();
  }
}
