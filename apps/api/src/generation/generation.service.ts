import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import type { QueuedJobData } from '@conveyor/queue';
import { checkGeneration, type DecodedImage, type GenerationBody } from '@conveyor/protocol';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import type { SurfaceRoute, UncountedJob } from '../contracts/surface-route.js';
import { JobSubmission, namedJob } from './job-submission.service.js';
import { ReplyReading } from './reply-reading.js';
import { ReplyResumption } from './reply-resumption.js';
import { ReplyRelay } from '../contracts/reply-relay.port.js';
import { RequestAdmission } from './request-admission.js';
import type { AskedTerms } from './request-terms.js';
import { maxTokensOf, type ReplyIdentity, type ReplyRun } from '../contracts/reply-run.js';

/** How a request came in, from its HTTP handler down: who asked, until when, and where it may go. */
export interface RequestContext {
  /** Name of the API key that made the request (`anonymous` with auth off): the reply's owner. */
  caller: string;
  /** Fires when the client goes away. */
  signal: AbortSignal;
  /** The one deployment the route serves (an org/app route); any the model name reaches when absent. */
  only?: DeploymentConfig;
  /** The deadline the request's headers set, in ms from its receipt; null: it set none. */
  deadlineMs: number | null;
}

/** What a route tells the pipeline about a request besides its job. */
export interface SubmitOptions {
  /** The surface that accepted it: its reply ids, the route its usage is counted under, how it is timed. */
  surface: SurfaceRoute | UncountedJob;
  /** The model name the client sent (a deployment's id, or an alias of it): the reply's `model`. */
  model: string;
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
 * The generation pipeline every route shares: admits a request to its deployment's job queue (its
 * service tier, deadline, place and tokens settled by RequestAdmission), queues its job, and follows
 * its reply through the reply relay with a per-request reader. Nothing is queued for a request that is
 * refused; what a job holds in the queue is taken back by JobRecall, and a reply's books are kept by
 * ReplyReading.
 */
@Injectable()
export class GenerationService {
  private readonly logger = new Logger(GenerationService.name);

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly registry: DeploymentRegistry,
    private readonly relay: ReplyRelay,
    private readonly admission: RequestAdmission,
    private readonly submission: JobSubmission,
    private readonly replies: ReplyReading,
    private readonly resumption: ReplyResumption,
  ) {}

  /**
   * The deployment a request's model name reaches (its id, or an alias); `only` limits it to one (an
   * org/app route serves just its own).
   */
  deploymentFor(model: string, only?: DeploymentConfig): DeploymentConfig {
    const deployment = this.registry.require(model);
    if (only && only.id !== deployment.id) throw OpenAiHttpError.modelNotFound(model);
    return deployment;
  }

  /**
   * Every generating surface's way in: checks its body against the deployment its model reaches, queues
   * its job and follows its reply. Nothing is queued for a body or request that is refused.
   */
  start(surface: SurfaceRoute, dto: GenerationBody, request: RequestContext): Promise<ReplyRun> {
    const deployment = this.deploymentFor(dto.model, request.only);
    const checked = checkGeneration(dto, deployment, this.config.api.images);
    return this.submit(deployment, (requestId, now) => checked.toJob(requestId, now), request.signal, {
      surface,
      model: dto.model,
      stream: dto.stream === true,
      prompt: dto.loggedPrompt(),
      caller: request.caller,
      images: checked.images(),
      asked: { tier: dto.askedTier(), deadlineMs: request.deadlineMs },
    });
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
    const { caller, asked } = options;
    const { route } = options.surface;
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
    const { tier, deadlineMs, reservedAt, admittedAt } = ticket;
    const who: ReplyIdentity = {
      id: `${options.surface.idPrefix}${requestId}`,
      model: options.model,
      created: Math.floor(admittedAt / 1000),
      tier,
    };
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
      throw OpenAiHttpError.unavailable(`The request could not be queued: ${(err as Error).message}`);
    }
    const holdPlace = () => this.admission.holdPlace(deployment.id, requestId);
    return {
      who,
      maxTokens: maxTokensOf(job),
      events: this.replies.readQueued(source, signal, {
        job,
        owner: caller,
        surface: options.surface,
        tier,
        receivedAt,
        reservedAt,
        admittedAt,
        deadlineMs,
        holdPlace,
      }),
      headers: ticket.headers,
    };
  }

  /** A reply already under way, followed from its start: see ReplyResumption. */
  resume(completionId: string, surface: SurfaceRoute, caller: string, signal: AbortSignal): Promise<ReplyRun> {
    return this.resumption.resume(completionId, surface, caller, signal);
  }

  /** Lets a reply go at shutdown, its job running on: see ReplyResumption. */
  letGo(requestId: string): void {
    this.resumption.letGo(requestId);
  }

  /** A request is refused at once while Redis is unreachable, rather than waiting on a connection. */
  private assertQueueReachable(): void {
    if (!this.submission.reachable) throw OpenAiHttpError.queueUnreachable();
  }
}
