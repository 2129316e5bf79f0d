import type { InputWatch, PlannedRequest } from './batch-input.reader.js';
import type { BatchPlan } from './batch-plan.js';

/** The input read on, in the plan's order, from the last line fed. */
export interface FeedCursor {
  /** The position of the last line fed as this replica saved it in the record: the cursor stands right after it. */
  at: number;
  /** The lines after it; null once the input was read to the end. */
  rest: AsyncGenerator<PlannedRequest> | null;
  /** A line read but not fed: its deployment had no room in its key's share. Fed first, next tick. */
  pending?: PlannedRequest;
}

/**
 * What this replica keeps of a batch between ticks while it holds the batch's lease, in one piece.
 * Everything here can be rebuilt from Redis and the input file, so it is dropped whole when the batch
 * ends or its lease goes to another replica: taken again later, the batch starts from what Redis says,
 * never from what this replica saw before another drove it.
 */
export class LeasedBatch implements InputWatch {
  /** Where feeding reads on in the input; none until the next feed opens it from the last line saved as fed. */
  cursor: FeedCursor | null = null;
  /** The batch's plan, once read (BatchPlans); null for a batch made before plans. */
  plan: BatchPlan | null | undefined = undefined;
  /** The deployments its lines were fed to, whose live sequences size its window. */
  readonly deployments = new Set<string>();
  /** When it last told the shares of its deployments its lines in flight (asking for lines or not). */
  sharesAt = 0;
  /** When its lines in flight were last checked, and the lines found without a job, since when. */
  readonly sweep = { at: 0, missing: new Map<number, number>() };
  /** The last line a cancel or expiry has ended, in file order: the next pass of the drain reads on after it. */
  drainedTo = 0;
  /** Passes over the input for lines neither written nor in flight, once every line was fed. */
  reconcilePasses = 0;
  /** Since when its input cannot be read, for another reason than not existing. */
  unreadableSince: number | null = null;

  constructor(
    readonly id: string,
    /** The replica holding the lease, as the lease names it. */
    readonly holder: string,
    private readonly ending: (batch: LeasedBatch) => Promise<void>,
    private readonly renewing: (batch: LeasedBatch) => Promise<boolean> = async () => true,
  ) {}

  /**
   * Renews the lease within a step that outlasts it (validating a million lines takes a minute; the
   * lease lasts seconds). Throws LeaseLost where another replica holds it now: that one drives the batch.
   */
  async holdOn(): Promise<void> {
    if (!(await this.renewing(this))) throw new LeaseLost(this.id);
  }

  /** The batch has ended (its final status is written): it leaves the active set, and this replica forgets it. */
  finish(): Promise<void> {
    return this.ending(this);
  }

  /** Forgets where feeding was, closing the input: the next feed reads on from the last line saved as fed. */
  async dropCursor(): Promise<void> {
    const cursor = this.cursor;
    this.cursor = null;
    await cursor?.rest?.return(undefined);
  }
}

/** Another replica took the batch's lease while this one was in a step: this one stops where it is. */
export class LeaseLost extends Error {
  constructor(batchId: string) {
    super(`Batch ${batchId}: its lease went to another replica`);
  }
}
