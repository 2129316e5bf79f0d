import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { inLinkedTrace } from '@conveyor/telemetry';
import { batchLineJobId, jobImageHashes, type QueuedJobData } from '@conveyor/queue';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { JobSubmission, namedJob } from '../generation/job-submission.service.js';
import { BatchLines } from '../repositories/batch-lines.port.js';
import type { BatchRecord } from '../repositories/batch-record.js';
import { BatchRecords } from '../repositories/batch-records.port.js';
import { LiveWorkers } from '../repositories/live-workers.port.js';
import { UnqueuedLines } from '../repositories/unqueued-lines.port.js';
import { BatchInput, type PlannedRequest } from './batch-input.reader.js';
import type { ParsedLine } from './batch-line.parser.js';
import type { LeasedBatch } from './leased-batch.js';
import { LineShares } from './line-shares.js';

/** What queueing a line keeps of its batch: the deployments its lines went to, which size its window. */
export type Fed = Pick<LeasedBatch, 'deployments'>;
/** What feeding keeps of a batch between ticks: where it reads on in the input, and where lines went. */
type Feeding = Fed & Pick<LeasedBatch, 'cursor' | 'dropCursor' | 'unreadableSince' | 'sharesAt' | 'plan'>;

/** Where a batch's feeding stands after a top-up. */
export interface TopUp {
  /** Its lines queued or running now. */
  inflight: number;
  /** Every line of the input was fed. */
  exhausted: boolean;
}

/**
 * Keeps a bounded number of each batch's lines in the queue, the rest staying in the input file: sizes
 * the batch's window, reads on in its input, and queues each line's job through the same submission as
 * an interactive request's, as many as its key's fair share of the line's deployment allows (LineShares).
 */
@Injectable()
export class LineFeeder {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly input: BatchInput,
    private readonly batches: BatchRecords,
    private readonly lines: BatchLines,
    private readonly submission: JobSubmission,
    private readonly registry: DeploymentRegistry,
    private readonly workers: LiveWorkers,
    private readonly unqueued: UnqueuedLines,
    private readonly shares: LineShares,
  ) {}

  /** Tops the batch's lines in the queue up to its window and its key's share, reading on in the input file. */
  async topUp(batch: BatchRecord, state: Feeding): Promise<TopUp> {
    const inflight = await this.lines.inflightCount(batch.id);
    const room = (await this.window(state)) - inflight;
    // A full window still keeps its share, unless the input was read to its end (it asks for no more).
    if (room <= 0 && state.cursor?.rest !== null) await this.shares.renew(batch, state, inflight);
    const fed = await this.feed(batch, state, room, inflight);
    return { inflight: inflight + fed.count, exhausted: fed.exhausted };
  }

  /**
   * Queues one line's job and records it in the window (before the job: a line in flight always has a
   * record). Its images are stored as it is queued, so only the lines in the window hold images in Redis.
   * A line recovered is queued again here too; only feeding counts lines out of the batch's unqueued ones.
   */
  async enqueue(
    batch: BatchRecord,
    state: Fed,
    line: number,
    { customId, body, deployment }: ParsedLine,
  ): Promise<void> {
    const requestId = batchLineJobId(batch.id, line);
    const view = body.view?.();
    const job: QueuedJobData = {
      ...namedJob(body.toJob(requestId, deployment), deployment, body.model),
      batch: { batchId: batch.id, customId, line, ...(view ? { view } : {}) },
    };
    const images = jobImageHashes(job);
    state.deployments.add(deployment.id);
    await this.lines.addInflight(batch.id, line, {
      customId,
      deployment: deployment.id,
      ...(images.length ? { images } : {}),
    });
    // Each line a trace of its own, linked to the batch's: one trace of every line would be unreadable.
    await inLinkedTrace(
      'batch line',
      batch.traceparent,
      { 'conveyor.batch.id': batch.id, 'conveyor.batch.line': line },
      () => this.submission.submit(job, body.images?.()),
    );
  }

  /**
   * How many of a batch's lines may be queued or running at once: twice the sequences the live workers of
   * its deployments have, so every sequence has a line to take the moment it is free, and adding workers
   * speeds up a single batch. `BATCH_INFLIGHT` is the floor (and the window until the batch's deployments
   * are known, from the first lines fed).
   */
  private async window({ deployments }: Fed): Promise<number> {
    const floor = this.config.batch.inflightPerBatch;
    if (!deployments.size) return floor;
    const live = await this.workers.counts([...deployments]);
    const sequences = [...deployments].reduce(
      (sum, id) => sum + (live.get(id) ?? 0) * (this.registry.all.find((d) => d.id === id)?.parallel ?? 0),
      0,
    );
    return Math.max(floor, 2 * sequences);
  }

  /**
   * Queues up to `room` more lines, reading on in the plan's order from the last line fed, each as its
   * key's share of its deployment allows: a line with no room there waits, read, for a later tick (lines
   * go in order).
   */
  private async feed(
    batch: BatchRecord,
    state: Feeding,
    room: number,
    inflight: number,
  ): Promise<{ count: number; exhausted: boolean }> {
    // With the window full, nothing to read and nothing to record: no Redis write this tick.
    if (room <= 0) return { count: 0, exhausted: false };
    // A cursor from before another replica fed on (this one stalled past its lease) stands behind the record.
    if (state.cursor?.at !== batch.fed_line) {
      await state.dropCursor();
      state.cursor = {
        at: batch.fed_line,
        rest: await this.input.openPlanned(batch, state, state.plan ?? null, batch.fed_line),
      };
    }
    const cursor = state.cursor;
    // Read to the end before: nothing is left to feed, and nothing to read again.
    if (!cursor.rest) return { count: 0, exhausted: true };
    const ticket = await this.shares.ticket(batch, state, inflight);
    // The positions queued this tick, per deployment: they leave its unqueued lines in one call each.
    const queued = new Map<string, number[]>();
    let count = 0;
    let last = batch.fed_line;
    let exhausted = false;
    while (count < room) {
      const next = await this.nextLine(cursor);
      if (!next) {
        exhausted = true;
        // It asks for no more lines: its key's share goes to the others while its last lines finish.
        await this.shares.forget(batch.id, [...state.deployments]);
        break;
      }
      if (next.ok && !(await ticket.take(next.value.deployment.id, room - count))) {
        cursor.pending = next;
        break;
      }
      last = next.position;
      if (!next.ok) continue; // validated before; a line that changed meaning since is skipped, not run
      await this.enqueue(batch, state, next.line, next.value);
      const positions = queued.get(next.value.deployment.id) ?? [];
      positions.push(next.position);
      queued.set(next.value.deployment.id, positions);
      count++;
    }
    for (const [deployment, positions] of queued) await this.unqueued.queued(batch.id, deployment, positions);
    // Past the lines skipped too, unless all it did was reach the end (as it always has).
    if (last !== batch.fed_line && (count > 0 || !exhausted)) {
      await this.batches.update(batch.id, { fed_line: last });
      cursor.at = last;
    }
    return { count, exhausted };
  }

  /** The line read but not fed last tick, or the next one in the input; null at its end. */
  private async nextLine(cursor: NonNullable<Feeding['cursor']>): Promise<PlannedRequest | null> {
    const pending = cursor.pending;
    if (pending) {
      delete cursor.pending;
      return pending;
    }
    const next = await cursor.rest?.next();
    if (next && !next.done) return next.value;
    cursor.rest = null;
    return null;
  }
}
