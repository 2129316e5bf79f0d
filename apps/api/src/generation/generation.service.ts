// One file past 300 lines: a request's life in the queue once admitted (queued, followed, its deadlines,
// taken back, its reader's end) shares the same few collaborators and state. Admission (terms, place,
// tokens) is RequestAdmission's.
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import {
  ADMISSION_RESERVATION_MS,
  isRequestId,
  jobImageHashes,
  type QueueTier,
  type QueuedJobData,
} from '@conveyor/queue';
import type { DecodedImage } from '@conveyor/protocol';
import { TokenQuota } from '../auth/token-quota.service.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { PlatformMetrics } from '../metrics/platform-metrics.service.js';
import { ReplyTiming } from '../metrics/reply-timing.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { ImageStore } from '../repositories/image-store.port.js';
import { LiveWorkers } from '../repositories/live-workers.port.js';
import type { RunnerEndpointUrl } from '../repositories/batch-record.js';
import { UsageLedger } from '../repositories/usage-ledger.port.js';
import { FollowedJobs } from './followed-jobs.js';
import { OPERATIONS, countUsage, type FollowedReply, type ResumedKind } from './followed-reply.js';
import { JobQueue } from '../contracts/job-queue.port.js';
import { JobSubmission, namedJob } from './job-submission.service.js';
import { ReplyDeadlines, readReply, type ReplyOutcome } from './reply-reader.js';
import { ReplyRelay } from '../contracts/reply-relay.port.js';
import { RequestAdmission } from './request-admission.js';
import type { AskedTerms } from './request-terms.js';
import { SeenUsage } from './seen-usage.js';
import { maxTokensOf, type ReplyIdentity, type ReplyRun } from '../contracts/reply-run.js';

/** What a route tells the pipeline about a request besides its job. */
export interface SubmitOptions {
  /** The model name the client sent (a deployment's id, or an alias of it): the reply's `model`. */
  model: string;
  /** Prefix of the reply's id (`chatcmpl-`, `cmpl-`, `embd-`). */
  idPrefix: string;
  /** The route that accepted it, what its usage is counted under; null for a job that is no model request (tokenizing). */
  route: RunnerEndpointUrl | null;
  stream: boolean;
  /** Logged only when LOG_PROMPTS is on. */
  prompt: unknown;
  /** Name of the API key that made the request (`anonymous` with auth off): the reply's owner. */
  caller: string;
  /** The images the job refers to, decoded: stored before it is queued, so that the job carries only their hashes. */
  images?: readonly DecodedImage[];
  /** The service tier and deadline the request itself asks for; its key and deployment have their say too. */
  asked?: AskedTerms;
}

/**
 * The generation pipeline every route shares: settles a request's service tier and deadline, admits it
 * to its deployment's job queue, and follows its reply through the reply relay with a per-request
 * reader. Nothing is queued for a request that is refused.
 */
@Injectable()
export class GenerationService {
  private readonly logger = new Logger(GenerationService.name);
  /** Jobs this replica enqueued and still follows: put back if Redis comes back without them. */
  readonly followed: FollowedJobs;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly registry: DeploymentRegistry,
    private readonly queue: JobQueue,
    private readonly relay: ReplyRelay,
    private readonly workers: LiveWorkers,
    private readonly metrics: PlatformMetrics,
    private readonly admission: RequestAdmission,
    private readonly submission: JobSubmission,
    private readonly images: ImageStore,
    private readonly usage: UsageLedger,
    private readonly quota: TokenQuota,
  ) {
    this.followed = new FollowedJobs(queue, (message) => this.logger.warn(message));
    queue.onReconnect(() => void this.followed.recover());
  }

  /**
   * The deployment a request's model name reaches (its id, or an alias); `only` limits it to one (an
   * org/app route serves just its own).
   */
  deploymentFor(model: string, only?: DeploymentConfig): DeploymentConfig {
    const deployment = this.registry.require(model);
    if (only && only.id !== deployment.id) throw OpenAiHttpError.modelNotFound(model);
    return deployment;
  }

  /** Enqueues the job `build` makes and follows its reply. Nothing is enqueued when the queue is full or unreachable. */
  async submit(
    deployment: DeploymentConfig,
    build: (requestId: string, now: number) => QueuedJobData,
    signal: AbortSignal,
    options: SubmitOptions,
  ): Promise<ReplyRun> {
    this.assertQueueReachable();
    const receivedAt = Date.now();
    const requestId = randomUUID();
    const { caller, route, asked } = options;
    // The job names this replica: its workers send the reply's events to this replica's inbox. It carries
    // its tier (its band in the queue) and its deadline, so a worker taking it too late runs nothing.
    const { ticket, job } = await this.admission.admit(
      { deployment, requestId, caller, route, asked },
      ({ tier, deadlineMs, now }) => ({
        ...namedJob(build(requestId, now), deployment, options.model),
        owner: caller,
        replyTo: this.relay.replica,
        tier,
        ...(deadlineMs === null ? {} : { deadlineAt: receivedAt + deadlineMs }),
      }),
    );
    const { tier, deadlineMs, reservedAt, admittedAt: now } = ticket;
    const who: ReplyIdentity = {
      id: `${options.idPrefix}${requestId}`,
      model: options.model,
      created: Math.floor(now / 1000),
      tier,
    };
    const images = jobImageHashes(job);
    const source = this.relay.subscribe(requestId);
    this.logger.log({
      msg: 'request queued',
      requestId,
      deployment: deployment.id,
      stream: options.stream,
      ...(this.config.logPrompts ? { prompt: options.prompt } : {}),
    });
    try {
      await this.submission.submit(job, options.images);
    } catch (err) {
      source.close();
      ticket.undo();
      void this.release(requestId, images);
      throw OpenAiHttpError.unavailable(`The request could not be queued: ${(err as Error).message}`);
    }
    // Its place is held until a worker takes the job (and gives it back), or the job is taken back here:
    // the reservation is made to last as long as the job may wait, half-way through it. A job taken (or
    // a reply ended) before then has given its place back already, so most requests skip that command.
    const holdPlace = () => this.admission.holdPlace(deployment.id, requestId);
    const holdIn = reservedAt + ADMISSION_RESERVATION_MS / 2 - Date.now();
    if (holdIn <= 0) holdPlace();
    this.followed.follow(job, source);
    const followed = { deployment: deployment.id, requestId, owner: options.caller, route: options.route };
    const deadlines = new ReplyDeadlines(source, {
      requestTimeoutMs: this.config.api.requestTimeoutMs,
      queueTimeoutMs: this.config.api.queueTimeoutMs,
      onQueueTimeout: () => this.withdrawUntaken(deployment.id, requestId, images),
      ...(holdIn > 0 && { onStillQueued: holdPlace, stillQueuedMs: holdIn }),
      ...(deadlineMs !== null && {
        deadlineMs: Math.max(0, receivedAt + deadlineMs - Date.now()),
        onDeadline: (takenAt: number | null) =>
          this.deadlinePassed(deployment.id, requestId, images, { deadlineMs, queuedAt: now, takenAt }),
      }),
    });
    return {
      who,
      maxTokens: maxTokensOf(job),
      events: this.read(source, signal, deadlines, { ...followed, images }, now, true, tier),
      headers: ticket.headers,
    };
  }

  /**
   * Follows a reply that is already under way (a client resuming a stream, on this replica or
   * another): its events from the start, then the live ones. Only the caller that made the
   * request may; anyone else is told there is no such reply, as files and batches do.
   */
  async resume(
    completionId: string,
    { idPrefix, route }: ResumedKind,
    caller: string,
    signal: AbortSignal,
  ): Promise<ReplyRun> {
    this.assertQueueReachable();
    const requestId = completionId.startsWith(idPrefix) ? completionId.slice(idPrefix.length) : '';
    if (!isRequestId(requestId)) {
      throw OpenAiHttpError.invalidRequest(
        `Invalid completion id '${completionId.slice(0, 80)}'.`,
        'completion_id',
        ErrorCode.invalidCompletionId,
      );
    }
    const job = await this.queue.find(requestId);
    if (!job?.replyTo || job.owner !== caller) {
      throw new OpenAiHttpError(
        404,
        'not_found_error',
        `No reply in progress or recently finished with id '${completionId}'.`,
        'completion_id',
        ErrorCode.completionNotFound,
      );
    }
    const who: ReplyIdentity = {
      id: completionId,
      model: job.model ?? job.deployment,
      created: Math.floor(job.enqueuedAt / 1000),
      tier: job.tier ?? 'default',
    };
    const source = this.relay.follow(requestId, job.replyTo, job.enqueuedAt);
    const deadlines = new ReplyDeadlines(source, {
      requestTimeoutMs: this.config.api.requestTimeoutMs,
      queueTimeoutMs: null,
      onQueueTimeout: () => Promise.resolve(null),
    });
    const followed = { deployment: job.deployment, requestId, images: jobImageHashes(job), owner: job.owner, route };
    return {
      who,
      maxTokens: maxTokensOf(job),
      events: this.read(source, signal, deadlines, followed, job.enqueuedAt, false, job.tier ?? 'default'),
      headers: {},
    };
  }

  /**
   * Ends this replica's reader of a reply as a shutdown does, leaving its job running: another replica
   * follows the reply on from Redis.
   */
  letGo(requestId: string): void {
    const message = 'This server stopped following the reply; another follows it on.';
    const stopped = new OpenAiHttpError(503, 'service_unavailable', message, null, ErrorCode.serverShuttingDown);
    this.relay.fail(requestId, stopped);
  }

  /** Best effort: stops a request's job wherever it is (waiting, or on any worker), whichever replica follows it. */
  async cancel(deployment: string, requestId: string): Promise<void> {
    if (await this.queue.cancel(deployment, requestId)) await this.admission.giveBackPlace(deployment, requestId);
  }

  private read(
    source: Parameters<typeof readReply>[0],
    signal: AbortSignal,
    deadlines: ReplyDeadlines,
    { deployment, requestId, images, owner, route }: FollowedReply,
    enqueuedAt: number,
    queued: boolean,
    tier: QueueTier,
  ): ReplyRun['events'] {
    // A resumed stream's reply was timed by the replica that accepted it.
    const timing = new ReplyTiming(this.metrics, deployment, enqueuedAt, queued, route && OPERATIONS[route], tier);
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
        // A job taken off the queue before any worker had it is released here; a worker releases the rest.
        if (outcome.cancelsJob && (await this.queue.cancel(deployment, requestId))) {
          await this.release(requestId, images);
          await this.admission.giveBackPlace(deployment, requestId);
        }
      },
    });
  }

  /** Serverless cold-start semantics: a job waits in the queue for a worker, but not forever. */
  private async withdrawUntaken(
    deployment: string,
    requestId: string,
    images: readonly string[],
  ): Promise<Error | null> {
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
  private async deadlinePassed(
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

  /** Best effort: what is not released now expires with the images' safety expiry. */
  private async release(requestId: string, images: readonly string[]): Promise<void> {
    if (!images.length) return;
    await this.images.release(requestId, images).catch((err: Error) => {
      this.logger.warn(`Could not release the images of ${requestId}: ${err.message}`);
    });
  }

  /** A request is refused at once while Redis is unreachable, rather than waiting on a connection. */
  private assertQueueReachable(): void {
    if (!this.queue.reachable) throw OpenAiHttpError.unavailable('The queue is unreachable; try again shortly.');
  }
}
