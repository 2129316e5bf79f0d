import { Logger } from '@nestjs/common';
import type { Job, JobsOptions } from 'bullmq';
import type { PlatformConfig } from '@conveyor/config';
import { deploymentQueueName, isGenerationJob, type QueuedJobData } from '@conveyor/queue';
import { QueueSet, type RedisClient } from '@conveyor/redis';
import { bullMqTelemetry } from '@conveyor/telemetry';

/** What a job sent on from a worker's own queue ends with there. */
export interface Forwarded {
  forwardedTo: string;
}

/**
 * Sends a job from a worker's own queue on to its deployment's queue, where any worker takes it: a
 * routed job that found no free sequence, or one left in the queue of a worker that died. Added there
 * under the same id before it leaves the first queue (adding an id twice adds nothing), so it is never
 * in neither; its attempt numbers go on from the ones it had, so its reply's fencing holds across both.
 */
export class JobForwarder {
  private readonly logger = new Logger(JobForwarder.name);
  private readonly queues: QueueSet<QueuedJobData>;

  /** `redis`: the worker's command connection, which the queues send on and leave open when closed. */
  constructor(config: PlatformConfig, redis: RedisClient) {
    this.queues = new QueueSet(redis, config.redis.prefix, (message) => this.logger.warn(message), bullMqTelemetry);
  }

  async forward(job: Job<QueuedJobData>, why: string): Promise<Forwarded> {
    const queueName = deploymentQueueName(job.data.deployment);
    const queue = this.queues.get(queueName);
    const data: QueuedJobData = isGenerationJob(job.data)
      ? { ...job.data, attemptBase: (job.data.attemptBase ?? 0) + job.attemptsStarted }
      : job.data;
    const { priority, attempts, backoff, removeOnComplete, removeOnFail } = job.opts;
    const opts: JobsOptions = { jobId: job.id, attempts, backoff, removeOnComplete, removeOnFail };
    // Its service tier's band (or a batch line's) goes with it; the `priority` band has none.
    if (priority) opts.priority = priority;
    await queue.add(job.name, data, opts);
    this.logger.debug(`Job ${job.id} sent on to ${queueName}: ${why}`);
    return { forwardedTo: queueName };
  }

  close(): Promise<void> {
    return this.queues.close();
  }
}
