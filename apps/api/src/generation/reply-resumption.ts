import { Injectable } from '@nestjs/common';
import { ErrorCode } from '@conveyor/openai';
import { isRequestId, jobImageHashes } from '@conveyor/queue';
import { JobQueue } from '../contracts/job-queue.port.js';
import { ReplyRelay } from '../contracts/reply-relay.port.js';
import type { ReplyIdentity, ReplyRun } from '../contracts/reply-run.js';
import { maxTokensOf } from '../contracts/reply-run.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import type { SurfaceRoute } from '../contracts/surface-route.js';
import { ReplyReading } from './reply-reading.js';

/**
 * Replies followed from Redis rather than from their start here: a client resuming a stream (on this
 * replica or another), and a reply this replica lets go at shutdown for another to follow on.
 */
@Injectable()
export class ReplyResumption {
  constructor(
    private readonly queue: JobQueue,
    private readonly relay: ReplyRelay,
    private readonly replies: ReplyReading,
  ) {}

  /**
   * Follows a reply that is already under way: its events from the start, then the live ones. Only the
   * caller that made the request may; anyone else is told there is no such reply, as files and batches do.
   */
  async resume(
    completionId: string,
    { idPrefix, route, operation }: SurfaceRoute,
    caller: string,
    signal: AbortSignal,
  ): Promise<ReplyRun> {
    if (!this.queue.reachable) throw OpenAiHttpError.queueUnreachable();
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
    const tier = job.tier ?? 'default';
    const who: ReplyIdentity = {
      id: completionId,
      model: job.model ?? job.deployment,
      created: Math.floor(job.enqueuedAt / 1000),
      tier,
    };
    const source = this.relay.follow(requestId, job.replyTo, job.enqueuedAt);
    const followed = {
      deployment: job.deployment,
      requestId,
      images: jobImageHashes(job),
      owner: job.owner,
      route,
      operation,
    };
    return {
      who,
      maxTokens: maxTokensOf(job),
      events: this.replies.readResumed(source, signal, followed, { enqueuedAt: job.enqueuedAt, tier }),
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
}
