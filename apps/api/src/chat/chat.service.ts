import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import type { ChatCompletion } from '@conveyor/openai';
import { ReplyFence, replyStreamKey, type ReplyEvent } from '@conveyor/queue';
import type { ChatCompletionRequestDto } from '@conveyor/validation';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { DeploymentRegistry } from '../models/deployment-registry.service.js';
import { ChatQueue } from '../queue/chat-queue.port.js';
import { ReplyRelay } from '../relay/reply-relay.service.js';
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

/** The chat use case: validate against deployments, enqueue one job, relay its reply. */
@Injectable()
export class ChatService {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly registry: DeploymentRegistry,
    private readonly queue: ChatQueue,
    private readonly relay: ReplyRelay,
    private readonly workers: LiveWorkers,
  ) {}

  /**
   * Enqueues the request; nothing is enqueued when it is refused. `only` binds
   * the request to one deployment (an org/app route serves just its own).
   */
  async start(dto: ChatCompletionRequestDto, signal: AbortSignal, only?: DeploymentConfig): Promise<ChatRun> {
    const deployment = this.registry.require(dto.model);
    if (only && only.id !== deployment.id) throw OpenAiHttpError.modelNotFound(dto.model);
    assertSupported(dto);
    await this.checkCapacity(deployment.id);
    const requestId = randomUUID();
    const who: ReplyIdentity = { id: `chatcmpl-${requestId}`, model: deployment.id, created: Math.floor(Date.now() / 1000) };
    const sub = this.relay.subscribe(replyStreamKey(this.config.redis.prefix, requestId));
    try {
      await this.queue.enqueue(toChatJob(dto, requestId, deployment.id, deployment.defaults));
    } catch (err) {
      sub.close();
      throw OpenAiHttpError.unavailable(`The request could not be queued: ${(err as Error).message}`);
    }

    const timeoutMs = this.config.api.requestTimeoutMs;
    const deadline = setTimeout(() => sub.fail(OpenAiHttpError.timeout(timeoutMs)), timeoutMs);
    const onAbort = () => sub.fail(new ClientGone());
    signal.addEventListener('abort', onAbort, { once: true });
    const queue = this.queue;
    // Serverless cold-start semantics: wait in the queue for a worker, but not forever.
    let taken = false;
    const queueTimeoutMs = this.config.api.queueTimeoutMs;
    const queueDeadline = setTimeout(() => {
      if (taken) return;
      void Promise.all([queue.withdraw(deployment.id, requestId), this.workers.count(deployment.id)]).then(([withdrawn, live]) => {
        if (!withdrawn) return;
        sub.fail(
          OpenAiHttpError.unavailable(
            `No worker took the request for "${deployment.id}" within ${queueTimeoutMs} ms ` +
              `(${live} live worker${live === 1 ? '' : 's'}); it was withdrawn from the queue. Retry later.`,
          ),
        );
      });
    }, queueTimeoutMs);

    async function* fenced(): AsyncGenerator<OutputEvent, void, undefined> {
      const fence = new ReplyFence();
      let finished = false;
      try {
        for await (const event of sub) {
          taken = true;
          // Late events of an attempt a newer one replaced, and repeats, are dropped here.
          if (!fence.accept(event)) continue;
          if (event.type === 'error') {
            finished = true;
            throw new OpenAiHttpError(event.status, event.status >= 500 ? 'server_error' : 'invalid_request_error', event.message, null, event.code);
          }
          // Set before yielding: a consumer that stops at the end event never resumes this generator.
          if (event.type === 'end') finished = true;
          yield event;
          if (finished) return;
        }
      } finally {
        clearTimeout(deadline);
        clearTimeout(queueDeadline);
        signal.removeEventListener('abort', onAbort);
        sub.close();
        if (!finished) await queue.cancel(deployment.id, requestId);
      }
    }
    return { who, events: fenced() };
  }

  /** Refuses at once, rather than queueing without bound, when a deployment's queue is full. */
  private async checkCapacity(deployment: string): Promise<void> {
    const waiting = await this.queue.waiting(deployment).catch(() => {
      throw OpenAiHttpError.unavailable('The queue is unavailable; try again shortly.');
    });
    if (waiting >= this.config.api.maxQueueDepth) {
      throw new OpenAiHttpError(
        429,
        'rate_limit_error',
        `The "${deployment}" queue is full (${waiting} requests waiting); retry shortly.`,
        null,
        'queue_full',
        { 'retry-after': '1' },
      );
    }
  }

  /** A non-streamed reply: the same event path, aggregated. */
  async complete(dto: ChatCompletionRequestDto, signal: AbortSignal, only?: DeploymentConfig): Promise<ChatCompletion> {
    const run = await this.start(dto, signal, only);
    let text = '';
    // A retried attempt continues the text (it starts `resumed`), so deltas simply add up.
    for await (const event of run.events) {
      if (event.type === 'delta') text += event.text;
      else if (event.type === 'end') return toChatCompletion(run.who, text, event.finishReason, event.usage);
    }
    throw OpenAiHttpError.unavailable('The reply ended before it was complete.');
  }
}
