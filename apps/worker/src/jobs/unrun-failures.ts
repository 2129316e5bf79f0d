import { Injectable, Logger } from '@nestjs/common';
import type { Job, Worker } from 'bullmq';
import { jobImageHashes, type QueuedJobData } from '@conveyor/queue';
import { ImageReleaser } from '../images/image-releaser.port.js';
import { ReplySinks } from './reply-sinks.js';
import { attemptOf, serverFailure } from './job-endings.js';

/**
 * A job that stalled more often than allowed (the workers that ran it died) is failed by the next
 * worker to fetch it, which never hands it to a job handler. What a handler does when a job ends
 * for good is done here instead: its images are released, and its failure is told to whoever waits
 * for it, which has no other way to hear of it: a batch line's to its batch, a reply's to its client.
 */
@Injectable()
export class UnrunFailures {
  private readonly logger = new Logger(UnrunFailures.name);

  constructor(
    private readonly images: ImageReleaser,
    private readonly sinks: ReplySinks,
  ) {}

  /** Hears of the jobs `worker` fails on fetch, without running them. */
  watch(worker: Worker): void {
    worker.on('failed', (job) => {
      if (job?.id && job.deferredFailure) void this.failed(job as Job<QueuedJobData>, job.deferredFailure);
    });
  }

  /** `reason`: why BullMQ failed the job (its deferred failure). Never throws: it runs from an event. */
  async failed(job: Job<QueuedJobData>, reason: string): Promise<void> {
    const { code, message } = serverFailure(job.data, reason);
    await this.refuse(job, 500, code, message);
  }

  /** Ends a job that will not run, its images released and its client (or batch) told why. Never throws. */
  async refuse(job: Job<QueuedJobData>, status: number, code: string, message: string): Promise<void> {
    const { requestId } = job.data;
    const images = jobImageHashes(job.data);
    if (images.length) {
      await this.images.release(requestId, images).catch((err: Error) => {
        this.logger.warn(`Could not release the images of ${requestId}: ${err.message}`);
      });
    }
    await this.sinks
      .open(job.data, attemptOf(job))
      .then(({ sink }) => sink.fail(status, code, message))
      .catch((err: Error) => this.logger.warn(`Could not report the failure of ${requestId}: ${err.message}`));
  }
}
