import { Injectable } from '@nestjs/common';
import type { DeploymentConfig } from '@conveyor/config';
import { jobImageHashes, type QueuedJobData } from '@conveyor/queue';
import type { DecodedImage } from '@conveyor/protocol';
import { ImageStore } from '../repositories/image-store.port.js';
import { JobQueue } from '../contracts/job-queue.port.js';
import { JobRouting } from './job-routing.service.js';

/** The job a request becomes, named by the model the client sent when that is an alias of the deployment. */
export function namedJob<Job extends QueuedJobData>(job: Job, deployment: DeploymentConfig, model: string): Job {
  return { ...job, ...(model === deployment.id ? {} : { model }) };
}

/**
 * How a job reaches a worker, for an interactive request and a batch line alike: its images are stored
 * (the job carries only their hashes), then it is queued where routing sends it (a worker that holds
 * its prefix, or its deployment's queue). What follows its reply is the caller's: a request subscribes
 * before this, a batch line's reply goes to the batch runner.
 */
@Injectable()
export class JobSubmission {
  constructor(
    private readonly queue: JobQueue,
    private readonly routing: JobRouting,
    private readonly images: ImageStore,
  ) {}

  /** Whether the queue answers now: a request is refused at once while it does not. */
  get reachable(): boolean {
    return this.queue.reachable;
  }

  /** Queues the job; when it cannot be, the images stored for it are released (best effort) and the error thrown. */
  async submit(job: QueuedJobData, images: readonly DecodedImage[] = []): Promise<void> {
    try {
      if (images.length) await this.images.hold(job.requestId, images);
      await this.queue.enqueue(job, await this.routing.target(job));
    } catch (err) {
      // What is not released now expires with the images' safety expiry.
      const held = jobImageHashes(job);
      if (held.length) await this.images.release(job.requestId, held).catch(() => undefined);
      throw err;
    }
  }
}
