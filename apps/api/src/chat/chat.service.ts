import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import type { ChatCompletion } from '@conveyor/openai';
import { ReplyAccumulator, ReplyFence, replyStreamKey, type QueuedJobData, type ReplyEvent, type ReplyResult } from '@conveyor/queue';
import type { ChatCompletionRequestDto } from '@conveyor/validation';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { DeploymentRegistry } from '../models/deployment-registry.service.js';
import { BacklogGauge } from '../queue/backlog-gauge.js';
import { ChatQueue } from '../queue/chat-queue.port.js';
import { ReplyRelay } from '../relay/reply-relay.service.js';
import type { ReplySubscription } from '../relay/reply-subscription.js';
import { PlatformMetrics } from '../metrics/platform-metrics.service.js';
import { ReplyTiming } from '../metrics/reply-timing.js';
import { LiveWorkers } from '../workers/live-workers.service.js';
import { assertSupported } from './chat-capabilities.js';
import { toChatJob } from './chat-request.mapper.js';
import { toChatCompletion, type ReplyIdentity } from './chat-response.mapper.js';

/** Reply events that carry output; `error` events are raised as exceptions instead. */
export type OutputEvent = Exclude<ReplyEvent, { type: 'error' }>;

export interface ChatRun {
  who: ReplyIdentity;
  events: AsyncGenerator<OutputEvent, void, undefined>;
}

class ClientGone extends Error {}

export const COMPLETION_ID_PREFIX = 'chatcmpl-';
export const SHUTTING_DOWN = 'server_shutting_down';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The chat use case: validate against deployments, enqueue one job, relay its reply. */
@Injectable()
export class ChatService {
  private readonly logger = new Logger(ChatService.name);
  private readonly backlog: BacklogGauge;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly registry: DeploymentRegistry,
    private readonly queue: ChatQueue,
    private readonly relay: ReplyRelay,
    private readonly workers: LiveWorkers,
    private readonly metrics: PlatformMetrics,
  ) {
    this.backlog = new BacklogGauge((deployment) => this.queue.waiting(deployment));
  }

  /**
   * Enqueues the request; nothing is enqueued when it is refused. `only` binds
   * the request to one deployment (an org/app route serves just its own).
   */
  async start(dto: ChatCompletionRequestDto, signal: AbortSignal, only?: DeploymentConfig): Promise<ChatRun> {
    const deployment = this.deploymentFor(dto.model, only);
    assertSupported(dto, deployment);
    return this.submit(deployment, (requestId, now) => toChatJob(dto, requestId, deployment.id, deployment.defaults, now), signal, {
      idPrefix: COMPLETION_ID_PREFIX,
      stream: dto.stream === true,
      prompt: dto.messages,
    });
  }

  /** The deployment a request names; `only` limits it to one (an org/app route serves just its own). */
  deploymentFor(model: string, only?: DeploymentConfig): DeploymentConfig {
    const deployment = this.registry.require(model);
    if (only && only.id !== deployment.id) throw OpenAiHttpError.modelNotFound(model);
    return deployment;
  }

  /**
   * Enqueues the job `build` makes and follows its reply; shared by every route that generates.
   * Nothing is enqueued when the queue is full or unreachable.
   */
  async submit(
    deployment: DeploymentConfig,
    build: (requestId: string, now: number) => QueuedJobData,
    signal: AbortSignal,
    options: { idPrefix: string; stream: boolean; prompt: unknown },
  ): Promise<ChatRun> {
    await this.checkCapacity(deployment.id);
    const requestId = randomUUID();
    const now = Date.now();
    const who: ReplyIdentity = { id: `${options.idPrefix}${requestId}`, model: deployment.id, created: Math.floor(now / 1000) };
    const job = build(requestId, now);
    const sub = this.relay.subscribe(replyStreamKey(this.config.redis.prefix, requestId));
    this.logger.log({
      msg: 'chat request queued',
      requestId,
      deployment: deployment.id,
      stream: options.stream,
      ...(this.config.logPrompts ? { prompt: options.prompt } : {}),
    });
    try {
      await this.queue.enqueue(job);
    } catch (err) {
      sub.close();
      throw OpenAiHttpError.unavailable(`The request could not be queued: ${(err as Error).message}`);
    }
    return { who, events: this.follow(sub, deployment.id, requestId, signal, true, now) };
  }

  /**
   * Follows a reply that is already under way (a client resuming a stream,
   * on this replica or another): its events from the start, then the live ones.
   */
  async resume(completionId: string, signal: AbortSignal): Promise<ChatRun> {
    const requestId = completionId.startsWith(COMPLETION_ID_PREFIX) ? completionId.slice(COMPLETION_ID_PREFIX.length) : '';
    if (!UUID.test(requestId)) throw OpenAiHttpError.invalidRequest(`Invalid completion id '${completionId.slice(0, 80)}'.`, 'completion_id', 'invalid_completion_id');
    const job = await this.queue.find(requestId);
    if (!job) throw new OpenAiHttpError(404, 'not_found_error', `No reply in progress or recently finished with id '${completionId}'.`, 'completion_id', 'completion_not_found');
    const who: ReplyIdentity = { id: completionId, model: job.deployment, created: Math.floor(job.enqueuedAt / 1000) };
    const sub = this.relay.subscribe(replyStreamKey(this.config.redis.prefix, requestId));
    return { who, events: this.follow(sub, job.deployment, requestId, signal, false, job.enqueuedAt) };
  }

  private async *follow(
    sub: ReplySubscription,
    deployment: string,
    requestId: string,
    signal: AbortSignal,
    queued: boolean,
    enqueuedAt: number,
  ): AsyncGenerator<OutputEvent, void, undefined> {
    const timing = new ReplyTiming(this.metrics, deployment, enqueuedAt, queued);
    const timeoutMs = this.config.api.requestTimeoutMs;
    const deadline = setTimeout(() => sub.fail(OpenAiHttpError.timeout(timeoutMs)), timeoutMs);
    const onAbort = () => sub.fail(new ClientGone());
    signal.addEventListener('abort', onAbort, { once: true });
    // Serverless cold-start semantics: wait in the queue for a worker, but not forever.
    let taken = !queued;
    const queueTimeoutMs = this.config.api.queueTimeoutMs;
    const queueDeadline = setTimeout(() => {
      if (taken) return;
      void Promise.all([this.queue.withdraw(deployment, requestId), this.workers.count(deployment)]).then(([withdrawn, live]) => {
        if (!withdrawn) return;
        sub.fail(
          OpenAiHttpError.unavailable(
            `No worker took the request for "${deployment}" within ${queueTimeoutMs} ms ` +
              `(${live} live worker${live === 1 ? '' : 's'}); it was withdrawn from the queue. Retry later.`,
          ),
        );
      });
    }, queueTimeoutMs);

    const fence = new ReplyFence();
    let finished = false;
    let shutdown = false;
    let outcome = 'abandoned';
    let usage: { promptTokens: number; completionTokens: number } | undefined;
    try {
      for await (const event of sub) {
        taken = true;
        // Late events of an attempt a newer one replaced, and repeats, are dropped here.
        if (!fence.accept(event)) continue;
        timing.observe(event);
        if (event.type === 'error') {
          finished = true;
          outcome = event.code;
          throw new OpenAiHttpError(event.status, event.status >= 500 ? 'server_error' : 'invalid_request_error', event.message, null, event.code);
        }
        // Set before yielding: a consumer that stops at the end event never resumes this generator.
        if (event.type === 'end') {
          finished = true;
          outcome = event.finishReason;
          usage = event.usage;
        }
        yield event;
        if (finished) return;
      }
    } catch (err) {
      shutdown = err instanceof OpenAiHttpError && err.code === SHUTTING_DOWN;
      if (outcome === 'abandoned') outcome = err instanceof ClientGone ? 'client_gone' : err instanceof OpenAiHttpError ? (err.code ?? 'error') : 'error';
      throw err;
    } finally {
      this.logger.log({ msg: 'chat request ended', requestId, deployment, outcome, ...usage, ms: Date.now() - enqueuedAt });
      clearTimeout(deadline);
      clearTimeout(queueDeadline);
      signal.removeEventListener('abort', onAbort);
      sub.close();
      // A replica shutting down leaves the job running, so the client can resume the stream elsewhere.
      if (!finished && !shutdown) await this.queue.cancel(deployment, requestId);
    }
  }

  /** Refuses at once, rather than queueing without bound, when a deployment's queue is full. */
  private async checkCapacity(deployment: string): Promise<void> {
    const depth = await this.backlog.admit(deployment, this.config.api.maxQueueDepth).catch(() => {
      throw OpenAiHttpError.unavailable('The queue is unavailable; try again shortly.');
    });
    if (!depth.admitted) {
      throw new OpenAiHttpError(
        429,
        'rate_limit_error',
        `The "${deployment}" queue is full (${depth.waiting} requests waiting); retry shortly.`,
        null,
        'queue_full',
        { 'retry-after': '1' },
      );
    }
  }

  /** A non-streamed reply: the same event path, aggregated. */
  async complete(dto: ChatCompletionRequestDto, signal: AbortSignal, only?: DeploymentConfig): Promise<ChatCompletion> {
    const run = await this.start(dto, signal, only);
    return toChatCompletion(run.who, await collectReply(run));
  }
}

/** Gathers a run's events into the finished reply; a retry that starts over replaces what came before. */
export async function collectReply(run: ChatRun): Promise<ReplyResult> {
  const reply = new ReplyAccumulator();
  for await (const event of run.events) {
    const result = reply.apply(event);
    if (result) return result;
  }
  throw OpenAiHttpError.unavailable('The reply ended before it was complete.');
}
