import { slotTag } from './slot-tags.js';
import type { ReplyResult } from './reply-result.js';

/** Present on a chat job that is one line of a batch: the worker reports to the batch, not to a reply stream. */
export interface BatchLineRef {
  batchId: string;
  customId: string;
  /** 1-based line number in the input file. */
  line: number;
  /** What the line's response shows beyond its route's default, as its request asked; handed back with its result. */
  view?: LineView;
}

/**
 * What a response shows of its reply that only its request says: the output is written long after the
 * request was read, from the result alone, so the result carries it.
 */
export interface LineView {
  /** Messages: the reply's thought, as a `thinking` block (the request's `thinking` was on). */
  thinking?: boolean;
  /** Messages: the request's max_tokens; a reply cut short before it ran out of context. */
  maxTokens?: number;
}

/** What a worker pushes to a batch's results list when a line ends. */
export type BatchLineResult = (
  | {
      ok: true;
      customId: string;
      line: number;
      requestId: string;
      model: string;
      reply: ReplyResult;
      view?: LineView;
    }
  | {
      ok: false;
      customId: string;
      line: number;
      requestId: string;
      model: string;
      status: number;
      code: string;
      message: string;
    }
) & {
  /** When the line ended (ms since the epoch): its response's `created`, the same however often it is written. */
  finishedAt?: number;
};

/**
 * BullMQ serves prioritized jobs lowest number first: batch lines come after every service tier's
 * band (see service-tiers.ts), so they never hold up an interactive request.
 */
export const BATCH_LINE_PRIORITY = 1000;

/** The batch record (a JSON string). A batch's keys share its tag on a cluster: one script commits to several. */
export const batchKey = (prefix: string, batchId: string): string => `${prefix}:batch:${slotTag(batchId)}`;
/** All batches by creation time, for listing; beside the active set on a cluster, as a new batch joins both. */
export const batchIndexKey = (prefix: string): string => `${prefix}:${slotTag('batches')}`;
/** Batches that still need driving (validating, running, draining). */
export const activeBatchesKey = (prefix: string): string => `${prefix}:${slotTag('batches')}:active`;
/** Results pushed by workers, consumed by the batch runner. */
export const batchResultsKey = (prefix: string, batchId: string): string => `${batchKey(prefix, batchId)}:results`;
/**
 * custom_ids already written, so a retried line is written once: a set kept by batches made before
 * `batchDoneLinesKey`, deleted with them.
 */
export const batchDoneKey = (prefix: string, batchId: string): string => `${batchKey(prefix, batchId)}:done`;
/**
 * Lines already written, one bit each by line number (a line's custom_id is unique in its batch), so a
 * retried line is written once: an eighth of a byte a line where a set of custom_ids kept tens.
 */
export const batchDoneLinesKey = (prefix: string, batchId: string): string => `${batchKey(prefix, batchId)}:done-lines`;
/** Lines fed to the queue and not yet collected: line number → custom_id. */
export const batchInflightKey = (prefix: string, batchId: string): string => `${batchKey(prefix, batchId)}:inflight`;
/** Which API replica drives a batch. */
export const batchLeaseKey = (prefix: string, batchId: string): string => `${batchKey(prefix, batchId)}:lease`;
/**
 * Lines of running batches for one deployment not yet queued: a hash of batch id → lines left to
 * queue, and `<batch id>:through` → the last line counted as queued (lines are fed in order, so a
 * line fed again after a failure, or recovered, is not counted twice). The autoscaling signal reads it.
 * In the deployment's slot on a cluster, beside its queues.
 */
export const batchUnqueuedKey = (prefix: string, deployment: string): string =>
  `${prefix}:batches:unqueued:${slotTag(deployment)}`;

/**
 * The batches feeding lines to one deployment, for weighted fair shares between API keys: a hash of batch
 * id → its key's name and weight, its lines in flight and when it said so (JSON). Each batch's replica
 * writes its own entry as it feeds; one that stops writing lapses (BATCH_SHARE_LAPSE_MS). In the
 * deployment's slot on a cluster.
 */
export const batchSharesKey = (prefix: string, deployment: string): string =>
  `${prefix}:batches:shares:${slotTag(deployment)}`;

/** How long a batch's entry among the shares counts unrenewed: its replica renews it at least every third of this. */
export const BATCH_SHARE_LAPSE_MS = 15_000;
