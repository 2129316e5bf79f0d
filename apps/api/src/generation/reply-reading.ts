import { Inject, Injectable, Logger } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ADMISSION_RESERVATION_MS, jobImageHashes, type QueueTier, type QueuedJobData } from '@conveyor/queue';
import { TokenQuota } from '../auth/token-quota.service.js';
import type { ReplyRun } from '../contracts/reply-run.js';
import { PlatformMetrics } from '../metrics/platform-metrics.service.js';
import { ReplyTiming } from '../metrics/reply-timing.js';
import type { SurfaceRoute, UncountedJob } from '../contracts/surface-route.js';
import { UsageLedger } from '../repositories/usage-ledger.port.js';
import { FollowedJobs } from './followed-jobs.js';
import { countUsage, type FollowedReply } from './followed-reply.js';
import { JobRecall } from './job-recall.js';
import { ReplyDeadlines, readReply, type ReplyOutcome, type ReplySource } from './reply-reader.js';
import { SeenUsage } from './seen-usage.js';

/** A request this replica has just queued, as its reader needs it. */
export interface QueuedReply {
  job: QueuedJobData;
  /** The key name that made the request. */
  owner: string;
  /** The surface that accepted it: the route its usage is counted under, how it is timed. */
  surface: SurfaceRoute | UncountedJob;
  tier: QueueTier;
  /** When the request arrived, when its place was reserved and when it was admitted (ms since the epoch). */
  receivedAt: number;
  reservedAt: number;
  admittedAt: number;
  /** The request's own deadline from its arrival, if it has one. */
  deadlineMs: number | null;
  /** Makes the request's place in the queue last while its job waits. */
  holdPlace: () => void;
}

/**
 * Reads one followed reply to its end, and keeps its books on the way: its deadlines, its timing in the
 * metrics, its usage counted where it is final, its token quota settled, the job followed while it runs,
 * and a job whose reply ends unread stopped (and taken back with what it held if no worker had it).
 */
@Injectable()
export class ReplyReading {
  private readonly logger = new Logger(ReplyReading.name);

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly metrics: PlatformMetrics,
    private readonly usage: UsageLedger,
    private readonly quota: TokenQuota,
    private readonly followed: FollowedJobs,
    private readonly recall: JobRecall,
  ) {}

  /** The events of a reply this replica queued: followed (put back if Redis loses its job), under every deadline. */
  readQueued(source: ReplySource, signal: AbortSignal, queued: QueuedReply): ReplyRun['events'] {
    const { job, receivedAt, deadlineMs, admittedAt } = queued;
    const { deployment, requestId } = job;
    const images = jobImageHashes(job);
    // Its place is held until a worker takes the job (and gives it back), or the job is taken back here:
    // the reservation is made to last as long as the job may wait, half-way through it. A job taken (or
    // a reply ended) before then has given its place back already, so most requests skip that command.
    const holdIn = queued.reservedAt + ADMISSION_RESERVATION_MS / 2 - Date.now();
    if (holdIn <= 0) queued.holdPlace();
    this.followed.follow(job, source);
    const deadlines = new ReplyDeadlines(source, {
      requestTimeoutMs: this.config.api.requestTimeoutMs,
      queueTimeoutMs: this.config.api.queueTimeoutMs,
      onQueueTimeout: () => this.recall.withdrawUntaken(deployment, requestId, images),
      ...(holdIn > 0 && { onStillQueued: queued.holdPlace, stillQueuedMs: holdIn }),
      ...(deadlineMs !== null && {
        deadlineMs: Math.max(0, receivedAt + deadlineMs - Date.now()),
        onDeadline: (takenAt: number | null) =>
          this.recall.deadlinePassed(deployment, requestId, images, { deadlineMs, queuedAt: admittedAt, takenAt }),
      }),
    });
    const followed = {
      deployment,
      requestId,
      images,
      owner: queued.owner,
      route: queued.surface.route,
      operation: queued.surface.operation,
    };
    return this.read(source, signal, deadlines, followed, { enqueuedAt: admittedAt, queued: true, tier: queued.tier });
  }

  /** The events of a reply already under way (resumed), under the request timeout alone. */
  readResumed(
    source: ReplySource,
    signal: AbortSignal,
    followed: FollowedReply,
    { enqueuedAt, tier }: { enqueuedAt: number; tier: QueueTier },
  ): ReplyRun['events'] {
    const deadlines = new ReplyDeadlines(source, {
      requestTimeoutMs: this.config.api.requestTimeoutMs,
      queueTimeoutMs: null,
      onQueueTimeout: () => Promise.resolve(null),
    });
    // A resumed stream's reply was timed by the replica that accepted it.
    return this.read(source, signal, deadlines, followed, { enqueuedAt, queued: false, tier });
  }

  private read(
    source: ReplySource,
    signal: AbortSignal,
    deadlines: ReplyDeadlines,
    { deployment, requestId, images, owner, route, operation }: FollowedReply,
    { enqueuedAt, queued, tier }: { enqueuedAt: number; queued: boolean; tier: QueueTier },
  ): ReplyRun['events'] {
    const timing = new ReplyTiming(this.metrics, deployment, enqueuedAt, queued, operation, tier);
    const seen = new SeenUsage();
    return readReply(source, signal, deadlines, {
      observe: (event) => {
        timing.observe(event);
        seen.observe(event);
        this.followed.started(requestId);
        if (event.type === 'end')
          countUsage(this.usage, { requestId, owner, deployment, route }, enqueuedAt, event.usage, this.logger);
      },
      finish: async (outcome: ReplyOutcome) => {
        this.followed.forget(requestId);
        // A reply let go at shutdown goes on elsewhere: whoever reads its end settles it.
        if (route && owner && (outcome.finished || outcome.cancelsJob))
          void this.quota.settle(owner, requestId, enqueuedAt, seen.total(outcome.usage));
        this.logger.log({
          msg: 'request ended',
          requestId,
          deployment,
          outcome: outcome.label,
          ...outcome.usage,
          ms: Date.now() - enqueuedAt,
        });
        if (outcome.cancelsJob) await this.recall.cancelUnread(deployment, requestId, images);
      },
    });
  }
}
