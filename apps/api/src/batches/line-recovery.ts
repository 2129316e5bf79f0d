import { Inject, Injectable, Logger } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import { batchLineJobId } from '@conveyor/queue';
import { JobQueue } from '../contracts/job-queue.port.js';
import { BatchLines } from '../repositories/batch-lines.port.js';
import type { BatchRecord } from '../repositories/batch-record.js';
import { BatchRecords } from '../repositories/batch-records.port.js';
import { ImageStore } from '../repositories/image-store.port.js';
import { BatchInput } from './batch-input.reader.js';
import type { ParsedLine } from './batch-line.parser.js';
import type { NotRunCode } from '../contracts/batch-endpoint.js';
import type { LeasedBatch } from './leased-batch.js';
import { LineFeeder, type Fed } from './line-feeder.js';
import { LINES_PER_PART, ResultWriter, type NamedLine } from './result-writer.js';

/** How often the lines in flight are checked for a job that is no longer in the queue. */
const SWEEP_EVERY_MS = 5000;
/** Passes over the input for lines neither written nor in flight before the rest are written as lost. */
const MAX_RECONCILE_PASSES = 3;
const now = () => Math.floor(Date.now() / 1000);

/** What recovering lines keeps of a batch between ticks, and how it ends one. */
type Recovering = Fed &
  Pick<LeasedBatch, 'holder' | 'sweep' | 'drainedTo' | 'reconcilePasses' | 'unreadableSince' | 'dropCursor' | 'finish'>;

/**
 * Accounts for the lines the happy path misses, so that a batch always ends with every custom_id
 * written once: lines whose job vanished from the queue (the sweep), lines neither written nor in
 * flight once every line was fed (reconciling), and, on cancel or expiry, lines that never ran (draining).
 */
@Injectable()
export class LineRecovery {
  // Under the runner's name: one batch's story reads in one logging context.
  private readonly logger = new Logger('BatchRunner');

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly batches: BatchRecords,
    private readonly lines: BatchLines,
    private readonly queue: JobQueue,
    private readonly images: ImageStore,
    private readonly input: BatchInput,
    @Inject(LineFeeder) private readonly feeder: Pick<LineFeeder, 'enqueue'>,
    @Inject(ResultWriter) private readonly writer: Pick<ResultWriter, 'writeNotRun' | 'writeLost'>,
  ) {}

  /**
   * Finds lines in flight whose job is no longer in the queue and is not about to report (missing at two
   * checks in a row), and queues them again: a job lost with a Redis failover, or never queued because
   * the replica that recorded the line died first. A line run twice is still written once.
   */
  async sweep(batch: BatchRecord, state: Recovering): Promise<void> {
    const sweep = state.sweep;
    if (Date.now() - sweep.at < SWEEP_EVERY_MS) return;
    sweep.at = Date.now();
    const lost: number[] = [];
    for (const [line, entry] of await this.lines.inflight(batch.id)) {
      if (await this.queue.exists(entry.deployment, batchLineJobId(batch.id, line))) {
        sweep.missing.delete(line);
        continue;
      }
      if (!sweep.missing.has(line)) sweep.missing.set(line, Date.now());
      else lost.push(line);
    }
    if (!lost.length) return;
    const wanted = new Set(lost);
    for await (const input of await this.input.open(batch, state)) {
      if (!wanted.has(input.line)) continue;
      if (!input.ok || (await this.lines.doneAmong(batch.id, [input.line])).size) {
        await this.lines.removeInflight(batch.id, input.line);
      } else await this.feeder.enqueue(batch, state, input.line, input.value);
      sweep.missing.delete(input.line);
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
  async reconcile(batch: BatchRecord, state: Recovering): Promise<void> {
    const passes = ++state.reconcilePasses;
    const missing: { line: number; parsed: ParsedLine }[] = [];
    for await (const input of await this.input.open(batch, state)) {
      if (input.ok && !(await this.lines.doneAmong(batch.id, [input.line])).size) {
        missing.push({ line: input.line, parsed: input.value });
      }
    }
    this.logger.warn(`Batch ${batch.id}: ${missing.length} line(s) neither written nor in flight (pass ${passes})`);
    if (passes <= MAX_RECONCILE_PASSES) {
      for (const { line, parsed } of missing) await this.feeder.enqueue(batch, state, line, parsed);
      return;
    }
    await this.writer.writeLost(
      batch,
      state,
      missing.map(({ line, parsed }) => ({ line, customId: parsed.customId })),
    );
  }

  /**
   * Cancel or expiry: lines still waiting are taken back, lines running finish, and once none is in
   * flight every line that did not run gets an error line with `code`, and the batch ends.
   */
  async drain(batch: BatchRecord, state: Recovering, code: NotRunCode): Promise<void> {
    if (code === ErrorCode.batchCancelled && batch.status !== 'cancelling') {
      await this.batches.update(batch.id, { status: 'cancelling', cancelling_at: batch.cancelling_at ?? now() });
    }
    const withdrawn: NamedLine[] = [];
    const missing = state.sweep.missing;
    state.sweep.at = Date.now();
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
    if (withdrawn.length && !(await this.writer.writeNotRun(batch, state, withdrawn, code))) return;
    if (await this.lines.inflightCount(batch.id)) return;
    await state.dropCursor();
    // Every line of the file, in its order: lines not yet fed, and lines folded into one that was taken
    // back, alike (the writer skips those already written). A pass holds its tick for at most half a
    // lease, so the lease is renewed while a long input drains, and the next pass reads on after the
    // last line written: passes that each began at line 1 stopped making progress past a few hundred
    // thousand lines, every pass spent skipping what the ones before had written.
    const until = Date.now() + this.config.batch.leaseMs / 2;
    let chunk: NamedLine[] = [];
    const write = async (): Promise<boolean> => {
      if (!(await this.writer.writeNotRun(batch, state, chunk, code))) return false;
      state.drainedTo = chunk.at(-1)?.line ?? state.drainedTo;
      chunk = [];
      return true;
    };
    // Validated before: a line with no custom_id was not in the batch.
    for await (const named of this.input.customIds(batch, state, state.drainedTo)) {
      chunk.push(named);
      if (chunk.length < LINES_PER_PART) continue;
      if (!(await write()) || Date.now() > until) return;
    }
    if (chunk.length && !(await write())) return;
    await this.batches.end(
      batch.id,
      code === ErrorCode.batchCancelled
        ? { status: 'cancelled', cancelled_at: now() }
        : { status: 'expired', expired_at: now() },
    );
    await state.finish();
  }

  private async releaseImages(jobId: string, images: readonly string[] | undefined): Promise<void> {
    if (!images?.length) return;
    await this.images.release(jobId, images).catch((err: Error) => {
      this.logger.warn(`Could not release the images of ${jobId}: ${err.message}`);
    });
  }
}
