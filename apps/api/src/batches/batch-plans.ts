import { text } from 'node:stream/consumers';
import { Injectable } from '@nestjs/common';
import { FileNotFoundError, FileStore } from '@conveyor/batch-store';
import { BATCH_PLAN_FILES, type BatchRecord } from '../repositories/batch-record.js';
import { BatchInput, type InputWatch } from './batch-input.reader.js';
import { BatchPlan } from './batch-plan.js';
import type { LeasedBatch } from './leased-batch.js';

/**
 * Where a batch's plan lives: a file of the batch's own in the file store (its order and repeats are as
 * large as its input, so Redis keeps only the plan's summary and the feeder's position in it). Any
 * replica that takes the batch over reads the same plan and feeds on from the same position.
 */
@Injectable()
export class BatchPlans {
  constructor(
    private readonly store: FileStore,
    private readonly input: BatchInput,
  ) {}

  /** Saves a new batch's plan; the id of the file that holds it. */
  async save(batch: BatchRecord, plan: BatchPlan): Promise<string> {
    const file = await this.store.create({
      filename: `${batch.id}_plan.json`,
      purpose: BATCH_PLAN_FILES,
      owner: batch.owner,
    });
    await this.store.writePart(file.id, 0, plan.serialize());
    return file.id;
  }

  /**
   * The batch's plan, read once per lease (null for a batch made before plans); a plan that stays
   * unreadable fails the batch as its input would.
   */
  async of(batch: BatchRecord, leased: Pick<LeasedBatch, 'plan'> & InputWatch): Promise<BatchPlan | null> {
    if (leased.plan !== undefined) return leased.plan;
    if (!batch.plan_file_id) return (leased.plan = null);
    return (leased.plan = BatchPlan.parse(await text(await this.input.read(batch.plan_file_id, 'plan', leased))));
  }

  /** The batch has ended: its plan goes with it. */
  async discard(batch: BatchRecord): Promise<void> {
    if (!batch.plan_file_id) return;
    await this.store.delete(batch.plan_file_id).catch((err: unknown) => {
      if (!(err instanceof FileNotFoundError)) throw err;
    });
  }
}
