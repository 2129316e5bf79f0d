import { Inject, Injectable, Logger } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { JobQueue } from '../contracts/job-queue.port.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { ImageStore } from '../repositories/image-store.port.js';
import { LiveWorkers } from '../repositories/live-workers.port.js';
import { FollowedJobs } from './followed-jobs.js';
import { RequestAdmission } from './request-admission.js';

/**
 * Takes a request's job back out of the queue, with what it held there: its images and its place in the
 * deployment's admission. For a client gone, a reply that ended unread, a job no worker took in time,
 * and a deadline passed; a job a worker has is stopped there instead, and the worker releases the rest.
 */
@Injectable()
export class JobRecall {
  private readonly logger = new Logger(JobRecall.name);

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly queue: JobQueue,
    private readonly workers: LiveWorkers,
    private readonly images: ImageStore,
    private readonly admission: RequestAdmission,
    private readonly followed: FollowedJobs,
  ) {}

  /** Best effort: stops a request's job wherever it is (waiting, or on any worker), whichever replica follows it. */
  async cancel(deployment: string, requestId: string): Promise<void> {
    if (await this.queue.cancel(deployment, requestId)) await this.admission.giveBackPlace(deployment, requestId);
  }

  /** A reply that ends unread stops its job; one taken off the queue before any worker had it is released here. */
  async cancelUnread(deployment: string, requestId: string, images: readonly string[]): Promise<void> {
    if (!(await this.queue.cancel(deployment, requestId))) return;
    await this.release(requestId, images);
    await this.admission.giveBackPlace(deployment, requestId);
  }

  /** Serverless cold-start semantics: a job waits in the queue for a worker, but not forever. */
  async withdrawUntaken(deployment: string, requestId: string, images: readonly string[]): Promise<Error | null> {
    const [withdrawn, live] = await Promise.all([
      this.takeBack(deployment, requestId, images),
      this.workers.count(deployment),
    ]);
    if (!withdrawn) return null;
    return OpenAiHttpError.unavailable(
      `No worker took the request for "${deployment}" within ${this.config.api.queueTimeoutMs} ms ` +
        `(${live} live worker${live === 1 ? '' : 's'}); it was withdrawn from the queue. Retry later.`,
    );
  }

  /**
   * A request's own deadline passed: a job still queued is taken back; one a worker has (or took just
   * now) is stopped as its reply ends unfinished. Either way the reply ends with the deadline's error.
   */
  async deadlinePassed(
    deployment: string,
    requestId: string,
    images: readonly string[],
    { deadlineMs, queuedAt, takenAt }: { deadlineMs: number; queuedAt: number; takenAt: number | null },
  ): Promise<Error> {
    if (takenAt === null && (await this.takeBack(deployment, requestId, images)))
      return OpenAiHttpError.deadlineExceeded(deadlineMs, Date.now() - queuedAt, null);
    const started = takenAt ?? Date.now();
    return OpenAiHttpError.deadlineExceeded(deadlineMs, started - queuedAt, Date.now() - started);
  }

  /** Best effort: what is not released now expires with the images' safety expiry. */
  async release(requestId: string, images: readonly string[]): Promise<void> {
    if (!images.length) return;
    await this.images.release(requestId, images).catch((err: Error) => {
      this.logger.warn(`Could not release the images of ${requestId}: ${err.message}`);
    });
  }

  /** Takes a job back from the queue if no worker has it yet, with its images and its place; false when one has. */
  private async takeBack(deployment: string, requestId: string, images: readonly string[]): Promise<boolean> {
    // Not put back after an outage once withdrawn; followed again if a worker took it first after all.
    const followed = this.followed.forget(requestId);
    if (!(await this.queue.withdraw(deployment, requestId))) {
      if (followed) this.followed.follow(followed.job, followed.source, followed.started);
      return false;
    }
    await this.release(requestId, images);
    await this.admission.giveBackPlace(deployment, requestId);
    return true;
  }
}
