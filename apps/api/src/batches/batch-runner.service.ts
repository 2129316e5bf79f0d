import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ErrorCode, type BatchError } from '@conveyor/openai';
import { FileStoreCheck, FileStoreMismatch } from '../platform/file-store.check.js';
import { PeriodicPass } from '../platform/periodic-pass.js';
import type { BatchRecord } from '../repositories/batch-record.js';
import { BatchLines } from '../repositories/batch-lines.port.js';
import { BatchRecords } from '../repositories/batch-records.port.js';
import { BatchEnding } from './batch-ending.js';
import { InputUnreadable } from './batch-input.reader.js';
import { BatchPlans } from './batch-plans.js';
import { BatchValidator } from './batch-validator.js';
import { LeasedBatch, LeaseLost } from './leased-batch.js';
import { LineFeeder } from './line-feeder.js';
import { LineRecovery } from './line-recovery.js';
import { ResultWriter } from './result-writer.js';

const now = () => Math.floor(Date.now() / 1000);

/**
 * Drives batches, one tick at a time: for each active batch whose lease this replica holds (one API
 * replica drives a batch at a time), it hands the batch to the collaborator for its status. A new batch
 * is validated (BatchValidator); a running or cancelling one has its results written (ResultWriter),
 * its lost lines recovered or, on cancel or expiry, drained (LineRecovery), and its window topped up
 * (LineFeeder), until every custom_id is written once and the writer completes it; BatchEnding then
 * closes it.
 *
 * What the runner keeps of each batch between ticks is one LeasedBatch, dropped whole when the batch
 * ends or the lease is another replica's; everything else lives in Redis and the batch's files.
 */
@Injectable()
export class BatchRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BatchRunner.name);
  // The process names itself in the lease, so operators (and tests) can tell which replica drives a batch.
  readonly instance = `${hostname()}:${process.pid}:${randomUUID()}`;
  /** The batches this replica holds the lease of, each with what it keeps of it between ticks. */
  private readonly leased = new Map<string, LeasedBatch>();
  private mismatchReported = false;
  /** Since when ticks have failed to read the batches (Redis or the file store away): said once, and when it ends. */
  private outageSince: number | null = null;
  // A tick reports its own failures (an outage once, a store mismatch once); what reaches the pass is the
  // unexpected, such as failing a batch whose input cannot be read.
  private readonly ticks = new PeriodicPass(
    () => this.tick(),
    (err) => this.logger.error(`Batch tick failed: ${err.message}`),
  );

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly batches: BatchRecords,
    private readonly lines: BatchLines,
    private readonly storeCheck: FileStoreCheck,
    private readonly validator: BatchValidator,
    private readonly feeder: LineFeeder,
    private readonly writer: ResultWriter,
    private readonly recovery: LineRecovery,
    private readonly plans: BatchPlans,
    private readonly ending: BatchEnding,
  ) {}

  onApplicationBootstrap(): void {
    this.ticks.start(this.config.batch.tickMs);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.ticks.stop();
    // A replica shutting down hands its batches over at once, rather than leaving them idle until their
    // leases lapse (BATCH_LEASE_MS); with Redis gone, they lapse as after a crash.
    for (const batch of this.leased.values()) {
      await batch.dropCursor();
      await this.lines.releaseLease(batch.id, this.instance).catch(() => undefined);
    }
  }

  /** One pass over every active batch this replica holds (or can take) the lease of. */
  async tick(): Promise<void> {
    let ids: string[];
    try {
      // No batch is driven by a replica whose file store is not the one its peers share.
      await this.storeCheck.verify();
      ids = await this.batches.active();
    } catch (err) {
      if (err instanceof FileStoreMismatch) {
        if (!this.mismatchReported) this.logger.error(err.message);
        this.mismatchReported = true;
      } else if (this.outageSince === null) {
        // Every tick fails alike while it lasts (ten a second): one line now, one when it ends.
        this.outageSince = Date.now();
        this.logger.warn(`Batch runner paused: ${(err as Error).message}; batches wait until it answers again`);
      }
      return;
    }
    this.mismatchReported = false;
    if (this.outageSince !== null) {
      this.logger.log(`Batch runner resumed after ${((Date.now() - this.outageSince) / 1000).toFixed(1)} s`);
      this.outageSince = null;
    }
    const active = new Set(ids);
    for (const id of this.leased.keys()) if (!active.has(id)) this.release(id);
    for (const id of ids) {
      try {
        if (!(await this.lines.holdLease(id, this.instance, this.config.batch.leaseMs))) {
          this.release(id);
          continue;
        }
        let leased = this.leased.get(id);
        if (!leased) {
          leased = new LeasedBatch(
            id,
            this.instance,
            (b) => this.finishWith(b.id),
            (b) => this.lines.holdLease(b.id, this.instance, this.config.batch.leaseMs),
          );
          this.leased.set(id, leased);
        }
        await this.step(leased);
      } catch (err) {
        // The cursor may be past a line whose job was never queued (Redis failed half-way through
        // feeding): read on from the last line saved as fed. A line queued twice has one job id
        // (BullMQ adds nothing while the job exists), and a line that runs twice is written once.
        void this.leased.get(id)?.dropCursor();
        if (err instanceof InputUnreadable) await this.failUnreadable(id, err.message);
        else if (err instanceof LeaseLost) this.release(id);
        else this.logger.warn(`Batch ${id}: ${(err as Error).message}`);
      }
    }
  }

  /** Forgets what this replica kept of a batch it no longer drives. */
  private release(id: string): void {
    void this.leased.get(id)?.dropCursor();
    this.leased.delete(id);
  }

  private async step(leased: LeasedBatch): Promise<void> {
    const batch = await this.batches.get(leased.id);
    if (!batch) return this.batches.retire(leased.id);
    // A batch cancelled while validating is validated all the same: its lines are read and counted before
    // they are written as cancelled. Validation is what gives it its output file.
    if (batch.status === 'validating' || (batch.status === 'cancelling' && batch.output_file_id === null)) {
      return this.validator.validate(batch, leased);
    }
    if (batch.status === 'in_progress' || batch.status === 'cancelling') return this.drive(batch, leased);
    await this.finishWith(batch.id);
  }

  private async failUnreadable(id: string, message: string): Promise<void> {
    this.logger.error(`Batch ${id} failed: ${message}`);
    const error: BatchError = { code: ErrorCode.inputFileUnreadable, message, param: 'input_file_id', line: null };
    await this.batches.end(id, { status: 'failed', failed_at: now(), errors: [error] });
    await this.finishWith(id);
  }

  /** One tick of a running or cancelling batch. */
  private async drive(batch: BatchRecord, leased: LeasedBatch): Promise<void> {
    // Read once per lease: the writer answers folded repeats from it, the feeder follows its order.
    await this.plans.of(batch, leased);
    await this.writer.collect(batch, leased);
    const stop = batch.cancel_requested
      ? ErrorCode.batchCancelled
      : Date.now() >= batch.expires_at * 1000
        ? ErrorCode.batchExpired
        : null;
    if (stop) {
      await this.ending.stopFeeding(batch.id);
      return this.recovery.drain(batch, leased, stop);
    }
    await this.recovery.sweep(batch, leased);
    const fed = await this.feeder.topUp(batch, leased);
    if (!fed.exhausted || fed.inflight > 0 || (await this.lines.pendingResultCount(batch.id)) > 0) return;
    // Every line was fed and nothing is in flight: the batch ends only when every custom_id is written.
    if (batch.completed + batch.failed < batch.total) return this.recovery.reconcile(batch, leased);
    await this.writer.complete(batch, leased);
  }

  /** The batch has ended: this replica forgets it, and only its record and files remain. */
  private async finishWith(id: string): Promise<void> {
    this.release(id);
    await this.ending.close(id);
  }
}
