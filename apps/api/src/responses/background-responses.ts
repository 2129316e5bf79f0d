import { randomUUID } from 'node:crypto';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { DeploymentConfig } from '@conveyor/config';
import type { ResponseObject } from '@conveyor/openai';
import type { ResponseRequestDto } from '@conveyor/protocol';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { ResponseLeases } from '../repositories/response-leases.port.js';
import type { StoredResponse } from '../repositories/response-store.port.js';
import type { ReplyRun } from '../contracts/reply-run.js';
import { ResponseOutcomes, type RecordedResponse } from './response-outcomes.service.js';
import { RESPONSE_ID_PREFIX, echoFromResponse, pendingResponse } from './response.mapper.js';
import { ResponsesService } from './responses.service.js';

/** How long a follower's lease lasts unless renewed: how soon after its replica dies another may take over. */
export const RESPONSE_LEASE_MS = 10_000;
/** How often a follower renews its leases: a few renewals fit in one lease, so one slow round loses none. */
const RENEW_EVERY_MS = 3_000;

/**
 * Background responses (`background: true`): answered at once as queued, then followed by this
 * replica, which stores each step (in progress, then completed, incomplete or failed) for the client
 * to poll. A cancel stops the job and wins over any later step.
 *
 * The follower holds a lease on each response it follows. When a replica reads a stored background
 * response still queued or in progress whose lease has lapsed (its follower was killed or crashed), it
 * takes the lease and follows the reply from its start (the reply stays in Redis, as a resumed stream
 * reads it), storing its end as the first follower would have. A replica shutting down hands its
 * responses over by giving up their leases.
 */
@Injectable()
export class BackgroundResponses implements OnModuleDestroy {
  private readonly logger = new Logger(BackgroundResponses.name);
  /** This replica's name on the leases it holds. */
  private readonly holder = randomUUID();
  /** The background responses this replica follows, by id: aborting one ends its reply and stops its job. */
  private readonly running = new Map<
    string,
    { controller: AbortController; requestId: string; recorded: RecordedResponse }
  >();
  private readonly renewal: NodeJS.Timeout;
  private handingOver = false;

  constructor(
    private readonly responses: ResponsesService,
    private readonly outcomes: ResponseOutcomes,
    private readonly leases: ResponseLeases,
  ) {
    this.renewal = setInterval(() => void this.renew(), RENEW_EVERY_MS);
    this.renewal.unref();
  }

  async start(dto: ResponseRequestDto, caller: string, only?: DeploymentConfig): Promise<ResponseObject> {
    const controller = new AbortController();
    // Its lease is held before it is stored: no replica ever reads it queued with nobody holding it.
    const hold = (id: string) =>
      this.leases.take(id, this.holder, RESPONSE_LEASE_MS).then(
        () => undefined,
        (err: Error) => this.logger.warn(`Could not take the lease of ${id}: ${err.message}`),
      );
    const recorded = await this.responses.start(
      dto,
      { caller, signal: controller.signal, only, deadlineMs: null },
      { status: 'queued', beforeStored: hold },
    );
    const { started } = recorded;
    const id = started.run.who.id;
    const following = this.follow(recorded);
    if (!started.stored) {
      // Nobody could ever poll it: stop it rather than generate for no one.
      controller.abort();
      await following;
      throw OpenAiHttpError.unavailable('The response could not be stored; retry shortly.');
    }
    this.track(id, controller, recorded, following);
    return pendingResponse(started.run.who, started.echo, 'queued');
  }

  /**
   * Takes over a stored background response read still queued or in progress, if its follower is gone
   * (its lease lapsed): follows its reply from the start and stores its end. Returns at once; the end is
   * stored when the reply ends (at once for a reply already finished).
   */
  adopt(stored: StoredResponse): void {
    const { response } = stored;
    if (!response.background || (response.status !== 'queued' && response.status !== 'in_progress')) return;
    if (this.handingOver || this.running.has(response.id)) return;
    void this.takeOver(stored).catch((err: Error) => {
      this.logger.warn(`Could not take over background response ${response.id}: ${err.message}`);
    });
  }

  /** Stops a background response this replica follows; true when it was one. */
  stop(id: string): boolean {
    const followed = this.running.get(id);
    followed?.controller.abort();
    return followed !== undefined;
  }

  /**
   * Shutting down: stops following every background response without stopping its job or storing any
   * end, and gives up their leases, so the next replica that reads one takes it over at once.
   */
  async handOver(): Promise<void> {
    this.handingOver = true;
    clearInterval(this.renewal);
    const ids = [...this.running.keys()];
    for (const [id, { requestId, recorded }] of this.running) {
      recorded.abandon();
      this.responses.letGo(requestId);
      this.running.delete(id);
    }
    await Promise.all(ids.map((id) => this.leases.release(id, this.holder).catch(() => undefined)));
    if (ids.length) this.logger.log(`Handed over ${ids.length} background response${ids.length === 1 ? '' : 's'}`);
  }

  onModuleDestroy(): void {
    clearInterval(this.renewal);
  }

  private async takeOver(stored: StoredResponse): Promise<void> {
    const id = stored.response.id;
    if (!(await this.leases.take(id, this.holder, RESPONSE_LEASE_MS))) return;
    const controller = new AbortController();
    let run: ReplyRun;
    try {
      run = await this.responses.resume(id, stored.owner, controller.signal);
    } catch (err) {
      if (err instanceof OpenAiHttpError && err.status === 404) {
        // Its job and reply have expired from Redis: its end can never be known.
        await this.outcomes.failedAs(
          stored.response,
          OpenAiHttpError.unavailable(
            'The server following this background response stopped, and its reply expired before another ' +
              'server could take it over; create the response again.',
          ),
        );
      }
      await this.leases.release(id, this.holder).catch(() => undefined);
      throw err;
    }
    this.logger.log(`Taking over background response ${id}: its follower is gone`);
    const recorded = this.outcomes.record({
      // Named as stored, so that the response keeps the id, model and creation time its client saw.
      run: { ...run, who: whoOf(stored.response) },
      echo: echoFromResponse(stored.response),
      conversation: stored.context,
      stored: true,
      options: {},
    });
    this.track(id, controller, recorded, this.follow(recorded));
  }

  private track(id: string, controller: AbortController, recorded: RecordedResponse, following: Promise<void>): void {
    const requestId = id.slice(RESPONSE_ID_PREFIX.length);
    this.running.set(id, { controller, requestId, recorded });
    void following.finally(() => {
      if (this.running.get(id)?.controller !== controller) return;
      this.running.delete(id);
      void this.leases.release(id, this.holder).catch(() => undefined);
    });
  }

  private async renew(): Promise<void> {
    if (!this.running.size) return;
    await this.leases.renew([...this.running.keys()], this.holder, RESPONSE_LEASE_MS).catch((err: Error) => {
      // Lapsed meanwhile: another replica may follow it too; both store the same end, and the first stays.
      this.logger.warn(`Could not renew background response leases: ${err.message}`);
    });
  }

  /** Takes the reply to its end: each step is stored as it passes (nothing once handed over). */
  private async follow(recorded: RecordedResponse): Promise<void> {
    if (this.handingOver) recorded.abandon();
    await recorded.drain().catch(() => undefined);
  }
}

const whoOf = (response: ResponseObject) => ({
  id: response.id,
  model: response.model,
  created: response.created_at,
  tier: response.service_tier,
});
