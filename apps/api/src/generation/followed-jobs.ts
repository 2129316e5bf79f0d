import { Injectable, Logger } from '@nestjs/common';
import { jobImageHashes, type QueuedJobData } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { JobQueue } from '../contracts/job-queue.port.js';
import type { ReplySource } from './reply-reader.js';

export interface Followed {
  job: QueuedJobData;
  source: Pick<ReplySource, 'fail'>;
  /** An event of the reply has been read: a worker ran the job. */
  started: boolean;
}

/** How often, and how many times, a pass that found the queue unreachable (its own connection not back yet) is tried again. */
const RETRY_MS = 250;
const RETRIES = 40;

export const LOST_JOB = 'The request was lost while Redis failed over; retry the request.';

/**
 * The jobs this replica enqueued and whose replies it is still following, so that it can put back a
 * job Redis lost. Replication is asynchronous and an AOF may lag its writes: a primary can acknowledge
 * a job and die before its replica has it, and the replica promoted in its place has never heard of
 * it. Its client would then wait for its deadline (minutes) for a reply no worker will write.
 *
 * Each time the queue is reachable again after an outage, every followed job is looked up. One that is
 * gone and whose reply has not begun is enqueued again with the same id (nothing is added if another
 * replica or a late write put it back meanwhile). One that is gone after its reply began ends with a
 * retryable error: the worker's events are lost with it, and running it again would repeat them. So does
 * one that refers to images, whose bytes may be gone with it and are not kept here to store again.
 * Re-enqueueing costs nothing while Redis keeps its writes, unlike making every enqueue wait (WAIT)
 * for a replica, and it also covers a single Redis restarted from an AOF that lost its last writes.
 */
@Injectable()
export class FollowedJobs {
  private readonly logger = new Logger(FollowedJobs.name);
  private readonly followed = new Map<string, Followed>();
  private recovering: Promise<void> | null = null;
  private again = false;

  constructor(private readonly queue: JobQueue) {
    queue.onReconnect(() => void this.recover());
  }

  follow(job: QueuedJobData, source: Pick<ReplySource, 'fail'>, started = false): void {
    this.followed.set(job.requestId, { job, source, started });
  }

  started(requestId: string): void {
    const followed = this.followed.get(requestId);
    if (followed) followed.started = true;
  }

  /** Stops following a job; returns what was followed, if anything. */
  forget(requestId: string): Followed | undefined {
    const followed = this.followed.get(requestId);
    this.followed.delete(requestId);
    return followed;
  }

  get size(): number {
    return this.followed.size;
  }

  /** Checks every followed job, retrying while the queue is unreachable; one pass at a time, and one more if asked meanwhile. */
  recover(): Promise<void> {
    if (this.recovering) {
      this.again = true;
      return this.recovering;
    }
    this.recovering = (async () => {
      do {
        this.again = false;
        for (let attempt = 0; ; attempt++) {
          try {
            await this.pass();
            break;
          } catch (err) {
            if (attempt >= RETRIES) {
              this.logger.warn(`Could not check the followed jobs after Redis came back: ${(err as Error).message}`);
              break;
            }
            await new Promise((r) => setTimeout(r, RETRY_MS));
          }
        }
      } while (this.again);
    })().finally(() => (this.recovering = null));
    return this.recovering;
  }

  private async pass(): Promise<void> {
    for (const [requestId, followed] of [...this.followed]) {
      if (this.followed.get(requestId) !== followed) continue;
      if (await this.queue.find(requestId)) continue;
      if (this.followed.get(requestId) !== followed) continue;
      // The API keeps no image once it is stored: a job that refers to images cannot be put back whole.
      if (followed.started || jobImageHashes(followed.job).length) {
        this.logger.warn(
          `Job ${requestId} is gone from Redis ${followed.started ? 'after its reply began' : 'with the images it refers to'}: ending the reply`,
        );
        followed.source.fail(OpenAiHttpError.unavailable(LOST_JOB));
        this.followed.delete(requestId);
        continue;
      }
      this.logger.warn(`Job ${requestId} is gone from Redis before any worker ran it: enqueueing it again`);
      await this.queue.enqueue(followed.job);
    }
  }
}
