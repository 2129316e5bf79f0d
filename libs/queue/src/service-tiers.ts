import { BATCH_LINE_PRIORITY } from './batch.js';

/**
 * The queue's priority bands, first served to last: what a request's service tier becomes once the
 * API has settled which one its key may use. Batch lines wait behind all three.
 */
export const QUEUE_TIERS = ['priority', 'default', 'flex'] as const;
export type QueueTier = (typeof QUEUE_TIERS)[number];

/** What a job of any kind carries besides its payload: the band it waits in, and when it stops being worth running. */
export interface JobTerms {
  /** Absent: `default` (a batch line: behind every tier). */
  tier?: QueueTier;
  /** When the request's deadline passes (ms since the epoch): a worker that takes the job later runs nothing. */
  deadlineAt?: number;
}

/**
 * BullMQ's priority of each band. BullMQ serves jobs without a priority (0) before prioritized ones, and
 * prioritized ones lowest number first, in arrival order within a number: so `priority` goes unprioritized,
 * and every band stays ahead of batch lines (BATCH_LINE_PRIORITY).
 */
const BULL_PRIORITY: Readonly<Record<QueueTier, number>> = { priority: 0, default: 1, flex: 2 };

/** The BullMQ priority a job is queued with: its band's, or a batch line's. */
export const bullPriorityOf = (job: JobTerms & { batch?: unknown }): number =>
  job.batch ? BATCH_LINE_PRIORITY : BULL_PRIORITY[job.tier ?? 'default'];

/** Whether a job queued with this BullMQ priority is a batch line (which holds no place in its queue's admission). */
export const isBatchLinePriority = (priority: number | undefined): boolean => (priority ?? 0) >= BATCH_LINE_PRIORITY;
