import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { FileStore } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ErrorCode, type BatchError } from '@conveyor/openai';
import { batchLineJobId } from '@conveyor/queue';
import { JobQueue } from '../generation/job-queue.port.js';
import { FileStoreCheck, FileStoreMismatch } from '../platform/file-store.check.js';
import type { BatchRecord } from '../repositories/batch-record.js';
import { BatchLines } from '../repositories/batch-lines.port.js';
import { BatchRecords } from '../repositories/batch-records.port.js';
import { ImageStore } from '../repositories/image-store.port.js';
import { BatchInput, InputUnreadable } from './batch-input.reader.js';
import type { ParsedLine } from './batch-line.parser.js';
import type { NotRunCode } from './batch-output.mapper.js';
import { LeasedBatch } from './leased-batch.js';
import { LineFeeder } from './line-feeder.js';
import { LINES_PER_PART, ResultWriter, type NamedLine } from './result-writer.js';

const MAX_REPORTED_ERRORS = 100;
/** How often the lines in flight are checked for a job that is no longer in the queue. */
const SWEEP_EVERY_MS = 5000;
/** Passes over the input for lines neither written nor in flight before the rest are written as lost. */
const MAX_RECONCILE_PASSES = 3;
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
    private readonly queue: JobQueue,
    private readonly storeCheck: FileStoreCheck,
    private readonly images: ImageStore,
    private readonly input: BatchInput,
    private readonly feeder: LineFeeder,
    private readonly writer: ResultWriter,
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
    if (stop) return this.drain(batch, leased, stop);
    await this.sweep(batch, leased);
    const fed = await this.feeder.topUp(batch, leased);
    if (!fed.exhausted || fed.inflight > 0 || (await this.lines.pendingResultCount(batch.id)) > 0) return;
    // Every line was fed and nothing is in flight: the batch ends only when every custom_id is written.
    if (batch.completed + batch.failed < batch.total) return this.reconcile(batch, leased);
    await this.writer.complete(batch, leased);
  }

  /**
   * Finds lines in flight whose job is no longer in the queue and is not about to report (missing at two
   * checks in a row), and queues them again: a job lost with a Redis failover, or never queued because
   * the replica that recorded the line died first. A line run twice is still written once.
   */
  private async sweep(batch: BatchRecord, leased: LeasedBatch): Promise<void> {
    const state = leased.sweep;
    if (Date.now() - state.at < SWEEP_EVERY_MS) return;
    state.at = Date.now();
    const lost: number[] = [];
    for (const [line, entry] of await this.lines.inflight(batch.id)) {
      if (await this.queue.exists(entry.deployment, batchLineJobId(batch.id, line))) {
        state.missing.delete(line);
        continue;
      }
      if (!state.missing.has(line)) state.missing.set(line, Date.now());
      else lost.push(line);
    }
    if (!lost.length) return;
    const wanted = new Set(lost);
    for await (const input of await this.input.open(batch, leased)) {
      if (!wanted.has(input.line)) continue;
      if (!input.ok || (await this.lines.doneAmong(batch.id, [input.value.customId])).size) {
        await this.lines.removeInflight(batch.id, input.line);
      } else await this.feeder.enqueue(batch, leased, input.line, input.value);
      state.missing.delete(input.line);
      wanted.delete(input.line);
      if (!wanted.size) break;
    }
    this.logger.warn(`Batch ${batch.id}: ${lost.length} line(s) in flight had no job; queued again`);
  }

  /**
   * The input is fed and nothing is in flight, but not every custom_id is written: queue the lines that
   * are neither done nor in flight again. After a few passes, what is still missing is written as lost,
   * so a batch always ends with every custom_id accounted for.
   */
  private async reconcile(batch: BatchRecord, leased: LeasedBatch): Promise<void> {
    const passes = ++leased.reconcilePasses;
    const missing: { line: number; parsed: ParsedLine }[] = [];
    for await (const input of await this.input.open(batch, leased)) {
      if (input.ok && !(await this.lines.doneAmong(batch.id, [input.value.customId])).size) {
        missing.push({ line: input.line, parsed: input.value });
      }
    }
    this.logger.warn(`Batch ${batch.id}: ${missing.length} line(s) neither written nor in flight (pass ${passes})`);
    if (passes <= MAX_RECONCILE_PASSES) {
      for (const { line, parsed } of missing) await this.feeder.enqueue(batch, leased, line, parsed);
      return;
    }
    await this.writer.writeLost(
      batch,
      leased,
      missing.map(({ line, parsed }) => ({ line, customId: parsed.customId })),
    );
  }

  /**
   * Cancel or expiry: lines still waiting are taken back, lines running finish, and once none is in
   * flight every line that did not run gets an error line with `code`.
   */
  private async drain(batch: BatchRecord, leased: LeasedBatch, code: NotRunCode): Promise<void> {
    if (code === ErrorCode.batchCancelled && batch.status !== 'cancelling') {
      await this.batches.update(batch.id, { status: 'cancelling', cancelling_at: batch.cancelling_at ?? now() });
    }
    const withdrawn: NamedLine[] = [];
    const missing = leased.sweep.missing;
    leased.sweep.at = Date.now();
    for (const [line, entry] of await this.lines.inflight(batch.id)) {
      const jobId = batchLineJobId(batch.id, line);
      // No worker will see a job taken back (or lost) end: its images are released here.
      if (await this.queue.withdraw(entry.deployment, jobId)) {
        withdrawn.push({ line, customId: entry.customId });
        await this.releaseImages(jobId, entry.images);
        continue;
      }
      // Running: it finishes and reports. Gone at two passes in a row: it will not report, and did not run.
      if (await this.queue.exists(entry.deployment, jobId)) missing.delete(line);
      else if (missing.has(line)) {
        withdrawn.push({ line, customId: entry.customId });
        await this.releaseImages(jobId, entry.images);
      } else missing.set(line, Date.now());
    }
    if (withdrawn.length && !(await this.writer.writeNotRun(batch, leased, withdrawn, code))) return;
    if (await this.lines.inflightCount(batch.id)) return;
    await leased.dropCursor();
    let chunk: NamedLine[] = [];
    for await (const input of await this.input.open(batch, leased, batch.fed_line)) {
      const customId = input.ok ? input.value.customId : input.customId;
      if (customId === undefined) continue; // validated before: a line with no custom_id was not in the batch
      chunk.push({ line: input.line, customId });
      if (chunk.length < LINES_PER_PART) continue;
      if (!(await this.writer.writeNotRun(batch, leased, chunk, code))) return;
      chunk = [];
    }
    if (chunk.length && !(await this.writer.writeNotRun(batch, leased, chunk, code))) return;
    await this.batches.update(
      batch.id,
      code === ErrorCode.batchCancelled
        ? { status: 'cancelled', cancelled_at: now() }
        : { status: 'expired', expired_at: now() },
    );
    await this.finishWith(batch.id);
  }

  private async releaseImages(jobId: string, images: readonly string[] | undefined): Promise<void> {
    if (!images?.length) return;
    await this.images.release(jobId, images).catch((err: Error) => {
      this.logger.warn(`Could not release the images of ${jobId}: ${err.message}`);
    });
  }

  private async finishWith(id: string): Promise<void> {
    this.release(id);
    await this.batches.retire(id);
    // Only the record and the files remain: per-line bookkeeping leaves Redis with the batch.
    await this.lines.clear(id);
  }
}
