import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { TokenQuota } from '../auth/token-quota.service.js';
import { BatchLines } from '../repositories/batch-lines.port.js';
import { BatchRecords } from '../repositories/batch-records.port.js';
import { UnqueuedLines } from '../repositories/unqueued-lines.port.js';
import { BatchEvents } from '../webhooks/batch-events.service.js';
import { BatchPlans } from './batch-plans.js';
import { LineShares } from './line-shares.js';
import { OutputExpiry } from './output-expiry.js';

/**
 * What a batch gives up when it stops asking for lines (a cancel or expiry: its unqueued lines no longer
 * scale the pool, its key's share goes to other batches), and what it leaves behind once it has ended:
 * its event, its files' expiry, its record and files only.
 */
@Injectable()
export class BatchEnding {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly batches: BatchRecords,
    private readonly lines: BatchLines,
    private readonly events: BatchEvents,
    private readonly outputExpiry: OutputExpiry,
    private readonly plans: BatchPlans,
    private readonly quota: TokenQuota,
    private readonly unqueued: UnqueuedLines,
    private readonly shares: LineShares,
  ) {}

  /** Lines not yet queued never will be: the pool need not scale for them, and its key's share goes to the others. */
  async stopFeeding(id: string): Promise<void> {
    await this.unqueued.forget(id, this.deploymentIds());
    await this.shares.forget(id, this.deploymentIds());
  }

  /**
   * The batch has ended: its event goes to the webhook outbox, and its files' expiry is set, before it
   * leaves the active set: a replica that dies in between leaves it active, and whoever takes it next
   * comes here again, with the same event and the same end time.
   */
  async close(id: string): Promise<void> {
    const ended = await this.batches.get(id);
    if (ended) {
      await this.events.announce(ended);
      await this.outputExpiry.apply(ended);
      await this.plans.discard(ended);
    }
    // What its lines that never ran (cancelled, expired, lost) still hold of its owner's day goes back.
    if (ended?.in_progress_at) {
      await this.quota.settleBatch(ended.owner, id, ended.in_progress_at * 1000, { lines: 0, used: 0, ended: true });
    }
    await this.batches.retire(id);
    // Per-line bookkeeping leaves Redis with the batch.
    await this.lines.clear(id);
    await this.stopFeeding(id);
  }

  /** Every deployment a batch's lines may go to: its counts of unqueued lines are kept per deployment. */
  private deploymentIds(): string[] {
    return this.config.deployments.map((d) => d.id);
  }
}
