import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { FileStore } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ErrorCode, type BatchError } from '@conveyor/openai';
import { FileStoreCheck, FileStoreMismatch } from '../platform/file-store.check.js';
import type { BatchRecord } from '../repositories/batch-record.js';
import { BatchLines } from '../repositories/batch-lines.port.js';
import { BatchRecords } from '../repositories/batch-records.port.js';
import { BatchInput, InputUnreadable } from './batch-input.reader.js';
import { LeasedBatch } from './leased-batch.js';
import { LineFeeder } from './line-feeder.js';
import { LineRecovery } from './line-recovery.js';
import { ResultWriter } from './result-writer.js';

const MAX_REPORTED_ERRORS = 100;
const now = () => Math.floor(Date.now() / 1000);

/**
 * Drives batches: validates the input file, keeps a bounded number of each batch's lines in the queue
 * (the rest stay in the file), writes results as they arrive, and finishes, cancels or expires the
 * batch. One API replica drives a batch at a time, by holding its lease.
 *
 * A line counts as done only once its output line is durably in the batch's files: results are written
 * as a numbered part, then one step commits them (done, out of the window, counted) if this replica
 * still drives the batch. A replica that dies in between leaves them to be written again, to the same
 * part, by whoever takes over, so each custom_id is written exactly once.
 */
@Injectable()
export class BatchRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BatchRunner.name);
  // The process names itself in the lease, so operators (and tests) can tell which replica drives a batch.
  readonly instance = `${hostname()}:${process.pid}:${randomUUID()}`;
  /** The batches this replica holds the lease of, each with what it keeps of it between ticks. */
  private readonly leased = new Map<string, LeasedBatch>();
  private mismatchReported = false;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly batches: BatchRecords,
    private readonly lines: BatchLines,
    private readonly store: FileStore,
    private readonly storeCheck: FileStoreCheck,
    private readonly input: BatchInput,
    private readonly feeder: LineFeeder,
    private readonly writer: ResultWriter,
    private readonly recovery: LineRecovery,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.tick().finally(() => (this.running = null));
    }, this.config.batch.tickMs);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
    for (const batch of this.leased.values()) await batch.dropCursor();
  }

  /** One pass over every active batch this replica holds (or can take) the lease of. */
  async tick(): Promise<void> {
    let ids: string[];
    try {
      // No batch is driven by a replica whose file store is not the one its peers share.
      await this.storeCheck.verify();
      ids = await this.batches.active();
    } catch (err) {
      if (!(err instanceof FileStoreMismatch)) this.logger.warn(`Batch runner: ${(err as Error).message}`);
      else if (!this.mismatchReported) this.logger.error(err.message);
      this.mismatchReported ||= err instanceof FileStoreMismatch;
      return;
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
        if (!leased) this.leased.set(id, (leased = new LeasedBatch(id, this.instance, (b) => this.finishWith(b.id))));
        await this.step(leased);
      } catch (err) {
        // The cursor may be past a line whose job was never queued (Redis failed half-way through
        // feeding): read on from the last line saved as fed. A line queued twice has one job id
        // (BullMQ adds nothing while the job exists), and a line that runs twice is written once.
        void this.leased.get(id)?.dropCursor();
        if (err instanceof InputUnreadable) await this.failUnreadable(id, err.message);
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
    if (batch.status === 'validating') return this.validate(batch, leased);
    if (batch.status === 'in_progress' || batch.status === 'cancelling') return this.drive(batch, leased);
    await this.finishWith(batch.id);
  }

  private async failUnreadable(id: string, message: string): Promise<void> {
    this.logger.error(`Batch ${id} failed: ${message}`);
    const error: BatchError = { code: ErrorCode.inputFileUnreadable, message, param: 'input_file_id', line: null };
    await this.batches.update(id, { status: 'failed', failed_at: now(), errors: [error] });
    await this.finishWith(id);
  }

  /** Streams the whole input file once: every line must be runnable before any is queued. */
  private async validate(batch: BatchRecord, leased: LeasedBatch): Promise<void> {
    const errors: BatchError[] = [];
    let errorCount = 0;
    const seen = new Set<string>();
    let total = 0;
    for await (const parsed of await this.input.open(batch, leased)) {
      total++;
      let error = parsed.ok ? null : parsed.error;
      if (parsed.ok) {
        if (seen.has(parsed.value.customId)) {
          error = {
            code: ErrorCode.duplicateCustomId,
            message: `Line ${parsed.line}: custom_id '${parsed.value.customId}' is used more than once.`,
            param: 'custom_id',
            line: parsed.line,
          };
        }
        seen.add(parsed.value.customId);
      }
      if (error && errorCount++ < MAX_REPORTED_ERRORS) errors.push(error);
    }
    if (total > this.config.batch.maxLines) {
      errors.unshift({
        code: ErrorCode.tooManyLines,
        message: `The file has ${total} lines; a batch may have at most ${this.config.batch.maxLines}.`,
        param: null,
        line: null,
      });
    }
    if (total === 0) {
      errors.push({ code: ErrorCode.emptyFile, message: 'The input file has no requests.', param: null, line: null });
    }
    if (errorCount > MAX_REPORTED_ERRORS) {
      errors.push({
        code: ErrorCode.tooManyErrors,
        message: `${errorCount - MAX_REPORTED_ERRORS} more invalid lines are not listed.`,
        param: null,
        line: null,
      });
    }
    const latest = await this.batches.get(batch.id);
    if (errors.length) {
      await this.batches.update(batch.id, { status: 'failed', failed_at: now(), errors, total });
      return this.finishWith(batch.id);
    }
    const output = await this.store.create({
      filename: `${batch.id}_output.jsonl`,
      purpose: 'batch_output',
      owner: batch.owner,
    });
    // Results are written as lines finish, so the output file exists (and can be read) from the start.
    await this.batches.update(batch.id, {
      status: latest?.cancel_requested ? 'cancelling' : 'in_progress',
      in_progress_at: now(),
      total,
      output_file_id: output.id,
    });
  }

  private async drive(batch: BatchRecord, leased: LeasedBatch): Promise<void> {
    await this.writer.collect(batch, leased);
    const stop = batch.cancel_requested
      ? ErrorCode.batchCancelled
      : Date.now() >= batch.expires_at * 1000
        ? ErrorCode.batchExpired
        : null;
    if (stop) return this.recovery.drain(batch, leased, stop);
    await this.recovery.sweep(batch, leased);
    const fed = await this.feeder.topUp(batch, leased);
    if (!fed.exhausted || fed.inflight > 0 || (await this.lines.pendingResultCount(batch.id)) > 0) return;
    // Every line was fed and nothing is in flight: the batch ends only when every custom_id is written.
    if (batch.completed + batch.failed < batch.total) return this.recovery.reconcile(batch, leased);
    await this.writer.complete(batch, leased);
  }

  private async finishWith(id: string): Promise<void> {
    this.release(id);
    await this.batches.retire(id);
    // Only the record and the files remain: per-line bookkeeping leaves Redis with the batch.
    await this.lines.clear(id);
  }
}
