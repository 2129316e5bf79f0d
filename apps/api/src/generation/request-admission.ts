import { Inject, Injectable, Logger } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import type { QueueTier, QueuedJobData } from '@conveyor/queue';
import { ApiKeyStore } from '../auth/api-key.store.js';
import { ANONYMOUS } from '../auth/caller.decorator.js';
import { TokenQuota } from '../auth/token-quota.service.js';
import type { RunnerEndpointUrl } from '../repositories/batch-record.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { QueueAdmission, type Asker } from '../repositories/queue-admission.port.js';
import { queueRefusal } from './queue-refusal.js';
import { servedTier, settledDeadline, type AskedTerms } from './request-terms.js';
import { estimateTokens } from './token-estimate.js';

/** What a request is admitted on: where it goes, who asks, what it asks for of its own. */
export interface AdmissionTerms {
  deployment: DeploymentConfig;
  requestId: string;
  /** Name of the API key that made the request (`anonymous` with auth off). */
  caller: string;
  /** The route that accepted it; null for a job that is no model request (tokenizing), which uses no tokens. */
  route: RunnerEndpointUrl | null;
  asked?: AskedTerms;
}

/** The terms a request was admitted on, settled, and how to take the admission back. */
export interface AdmissionTicket {
  tier: QueueTier;
  /** Milliseconds from receipt; null: no deadline. */
  deadlineMs: number | null;
  /** When its queue place was asked for. */
  reservedAt: number;
  /** When it was admitted: its job's time. */
  admittedAt: number;
  /** What the reply says of the key's token quota (`x-ratelimit-*-tokens`); empty for a key without one. */
  headers: Record<string, string>;
  /** Gives back what admitting took, the queue place and the reserved tokens, for a job that was not queued after all. */
  undo(): void;
}

/**
 * One admission for every request: settles its service tier and deadline from what it asked for, its
 * key and its deployment; takes a place in its deployment's queue (refused when the queue is full, or
 * deep for `flex`, or its free places are held for other keys' fair shares); builds its job on those
 * terms and reserves the job's estimated tokens against its key's token quota. Each step that fails
 * gives back the ones before it; the ticket's `undo` gives back all of them.
 */
@Injectable()
export class RequestAdmission {
  private readonly logger = new Logger(RequestAdmission.name);

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly places: QueueAdmission,
    private readonly quota: TokenQuota,
    private readonly keys: ApiKeyStore,
  ) {}

  /**
   * Admits the request and builds its job with `build` on the settled terms (nothing is built for a
   * request refused its place). Throws the refusal: 429 for a full queue or the token quota, 503 while
   * Redis is unreachable.
   */
  async admit(
    terms: AdmissionTerms,
    build: (settled: { tier: QueueTier; deadlineMs: number | null; now: number }) => QueuedJobData,
  ): Promise<{ ticket: AdmissionTicket; job: QueuedJobData }> {
    const { deployment, requestId, caller } = terms;
    const key = await this.keys.byName(caller);
    const tier = servedTier(terms.asked?.tier, key);
    const deadlineMs = settledDeadline(terms.asked?.deadlineMs, key, deployment);
    // With authentication off every request is the one anonymous caller's: nothing to share between keys.
    const asker = caller === ANONYMOUS ? undefined : { name: caller, weight: key?.weight ?? 1 };
    const reservedAt = Date.now();
    await this.takePlace(deployment.id, requestId, tier, asker);
    const now = Date.now();
    let job: QueuedJobData;
    let headers: Record<string, string> | null;
    try {
      job = build({ tier, deadlineMs, now });
      headers = terms.route ? await this.quota.reserve(caller, requestId, estimateTokens(job, deployment), now) : null;
    } catch (err) {
      await this.giveBackPlace(deployment.id, requestId);
      throw err;
    }
    const ticket: AdmissionTicket = {
      tier,
      deadlineMs,
      reservedAt,
      admittedAt: now,
      headers: headers ?? {},
      undo: () => {
        if (headers) void this.quota.settle(caller, requestId, now, 0);
        void this.giveBackPlace(deployment.id, requestId);
      },
    };
    return { ticket, job };
  }

  /** Keeps the place of a job still waiting for a worker past the place's first lapse. */
  holdPlace(deployment: string, requestId: string): void {
    void this.places.queued(deployment, requestId).catch(() => undefined);
  }

  /** Best effort: a place not given back lapses on its own (see QueueAdmission). */
  async giveBackPlace(deployment: string, requestId: string): Promise<void> {
    await this.places.release(deployment, requestId).catch((err: Error) => {
      this.logger.warn(`Could not give back the queue place of ${requestId}: ${err.message}`);
    });
  }

  /**
   * Refuses at once, rather than queueing without bound, when a deployment's queue is full; a `flex`
   * request, when it is deep (FLEX_QUEUE_DEPTH): it would wait behind every other tier; any request, when
   * the free places are held for other keys under their weighted shares (FAIR_SHARES). The check and the
   * place it takes are one step in Redis, so requests arriving together, on any replica, cannot all see
   * room that only one of them has.
   */
  private async takePlace(
    deployment: string,
    requestId: string,
    tier: QueueTier,
    asker: Asker | undefined,
  ): Promise<void> {
    const { maxQueueDepth, flexQueueDepth, fairShares } = this.config.api;
    const flex = tier === 'flex';
    const limit = flex ? flexQueueDepth : maxQueueDepth;
    const admission = await this.places
      .reserve(deployment, requestId, limit, fairShares ? asker : undefined)
      .catch(() => {
        throw OpenAiHttpError.queueUnreachable();
      });
    if (!admission.admitted && flex && admission.held === undefined) {
      throw new OpenAiHttpError(
        429,
        'rate_limit_error',
        `Resource unavailable: the "${deployment}" queue is too deep for flex processing ` +
          `(${admission.queued} requests waiting); retry later, or use service_tier "default".`,
        'service_tier',
        ErrorCode.resourceUnavailable,
        { 'retry-after': '1' },
      );
    }
    if (!admission.admitted) throw queueRefusal(deployment, admission);
  }
}
