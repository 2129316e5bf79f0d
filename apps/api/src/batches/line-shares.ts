import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { BATCH_SHARE_LAPSE_MS } from '@conveyor/queue';
import { ApiKeyStore } from '../auth/api-key.store.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { BatchShares } from '../repositories/batch-shares.port.js';
import type { BatchRecord } from '../repositories/batch-record.js';
import { LiveWorkers } from '../repositories/live-workers.port.js';
import type { LeasedBatch } from './leased-batch.js';

/** What sharing keeps of a batch between ticks: where its lines went, and when it last said how many fly. */
export type Sharing = Pick<LeasedBatch, 'deployments' | 'sharesAt'>;

/** A batch whose window is full still renews its entry this often, so it never lapses while it feeds. */
const RENEW_EVERY_MS = BATCH_SHARE_LAPSE_MS / 3;

/** One tick's lines a batch may queue, per deployment, asked for when its first line for one comes up. */
export class ShareTicket {
  private readonly left = new Map<string, number>();

  constructor(
    private inflight: number,
    private readonly ask: (deployment: string, wanted: number, inflight: number) => Promise<number>,
  ) {}

  /** Takes a place for one line to `deployment`, asking for up to `wanted` there the first time; false: none left. */
  async take(deployment: string, wanted: number): Promise<boolean> {
    let left = this.left.get(deployment);
    if (left === undefined) this.left.set(deployment, (left = await this.ask(deployment, wanted, this.inflight)));
    if (left <= 0) return false;
    this.left.set(deployment, left - 1);
    this.inflight++;
    return true;
  }
}

/**
 * Weighted fair shares between API keys of each deployment's batch lines in flight, each key's share split
 * evenly between its batches.
 *
 * Why a bound on lines in flight rather than BullMQ priorities: a line's priority is fixed when it is
 * queued, so priorities from a virtual clock grow without end and would have to be rewritten in the
 * queue when they outgrow BullMQ's range; and with each key's lines in flight held to its weighted share
 * of the deployment's capacity (twice its live sequences), the lines waiting are few and served first in,
 * first out, so each key is served in proportion to its lines in flight, which is its weight. It keeps
 * every batch line at BATCH_LINE_PRIORITY, the band above the interactive ones, and it costs one script
 * call per batch per tick it feeds, none while its window is full.
 */
@Injectable()
export class LineShares {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly shares: BatchShares,
    private readonly keys: ApiKeyStore,
    private readonly workers: LiveWorkers,
    private readonly registry: DeploymentRegistry,
  ) {}

  /** The lines `batch`, with `inflight` in flight, may queue this tick; any number with fair shares off. */
  async ticket(batch: BatchRecord, state: Sharing, inflight: number): Promise<ShareTicket> {
    if (!this.config.api.fairShares) return new ShareTicket(inflight, (_, wanted) => Promise.resolve(wanted));
    const weight = await this.weightOf(batch.owner);
    return new ShareTicket(inflight, async (deployment, wanted, now) => {
      state.sharesAt = Date.now();
      return this.shares.grant(deployment, {
        batchId: batch.id,
        owner: batch.owner,
        weight,
        inflight: now,
        wanted,
        capacity: await this.capacity(deployment),
      });
    });
  }

  /**
   * A batch whose window is full asks for nothing, but its lines still fly: it says so now and then, so
   * its key keeps its share and its entry does not lapse.
   */
  async renew(batch: BatchRecord, state: Sharing, inflight: number): Promise<void> {
    if (!this.config.api.fairShares || Date.now() - state.sharesAt < RENEW_EVERY_MS) return;
    const ticket = await this.ticket(batch, state, inflight);
    for (const deployment of state.deployments) await ticket.take(deployment, 0);
  }

  /** The batch feeds no more: its lines leave its key's share at once, rather than when its entry lapses. */
  async forget(batchId: string, deployments: readonly string[]): Promise<void> {
    if (this.config.api.fairShares) await this.shares.forget(batchId, deployments);
  }

  private async weightOf(owner: string): Promise<number> {
    return (await this.keys.byName(owner))?.weight ?? 1;
  }

  /** Lines the deployment keeps in flight: twice its live sequences (as a batch's window), at least BATCH_INFLIGHT. */
  private async capacity(deployment: string): Promise<number> {
    const parallel = this.registry.all.find((d) => d.id === deployment)?.parallel ?? 0;
    const live = await this.workers.count(deployment);
    return Math.max(this.config.batch.inflightPerBatch, 2 * live * parallel);
  }
}
