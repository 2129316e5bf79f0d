import { Injectable } from '@nestjs/common';
import { ApiKeyStore } from '../auth/api-key.store.js';
import type { BatchRecord } from '../repositories/batch-record.js';
import { WebhookOutbox } from './webhook-outbox.port.js';

/**
 * Hands an ended batch's event (made as it ended, in the same step) to the outbox, when its owner has a
 * webhook. Called before the batch leaves the runner's active set, so a replica that dies in between
 * leaves the batch to another, which hands the same event over again: the outbox keeps it once.
 */
@Injectable()
export class BatchEvents {
  constructor(
    private readonly keys: ApiKeyStore,
    private readonly outbox: WebhookOutbox,
  ) {}

  async announce(batch: BatchRecord): Promise<void> {
    if (!batch.ended_event || !(await this.keys.byName(batch.owner))?.webhook) return;
    await this.outbox.enqueue({ owner: batch.owner, event: batch.ended_event });
  }
}
