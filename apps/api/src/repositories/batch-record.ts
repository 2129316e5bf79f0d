import type { Batch, BatchEndpointUrl, BatchError, BatchEventType, WebhookEvent } from '@conveyor/openai';
import { newEventId } from '@conveyor/queue';
import { currentTraceparent } from '@conveyor/telemetry';

/** What a batch's plan did, as the batch object shows it. */
export interface PlanSummary {
  /** Groups of lines that share a beginning. */
  groups: number;
  /** Passes over the input: one per large group, plus one for the small groups packed together. */
  steps: number;
  /** Lines answered by an identical line's result instead of running. */
  folded: number;
}

/** The Messages route: Anthropic's Message Batches run its lines; OpenAI's batches cannot name it. */
export const MESSAGES_URL = '/v1/messages';

/** Every route the batch runner runs lines of: OpenAI's batch endpoints and the Messages route. */
export type RunnerEndpointUrl = BatchEndpointUrl | typeof MESSAGES_URL;

/**
 * A batch as kept in Redis (the wire object's fields plus bookkeeping): one
 * hash whose fields are updated one at a time, so the runner's progress and a
 * client's cancel never overwrite each other.
 */
export type BatchRecord = Omit<Batch, 'object' | 'endpoint' | 'errors' | 'request_counts' | 'plan'> & {
  /** `/v1/messages` for a Message Batch (id `msgbatch_…`), else the OpenAI batch's endpoint. */
  endpoint: RunnerEndpointUrl;
  /** API key name that created the batch; other keys cannot see it. */
  owner: string;
  errors: BatchError[] | null;
  total: number;
  completed: number;
  failed: number;
  /**
   * Lines handed to the queue so far, as a position in the order the batch's plan feeds them (its lines
   * at positions up to here are fed); in file order, a line's number, for a batch made before plans.
   */
  fed_line: number;
  /** The file holding the batch's plan (BatchPlans), once validation made it. Never on the wire. */
  plan_file_id?: string;
  /** What the plan did: groups, passes, repeats folded; absent until validated. */
  plan?: PlanSummary;
  /** False: every line runs, repeats too (`fold_repeats: false` when the batch was made). */
  fold_repeats?: boolean;
  /** Prompt tokens of the lines that ran, those reused from a prompt cache, and those of folded lines (never evaluated). */
  prompt_tokens?: number;
  cached_tokens?: number;
  folded_tokens?: number;
  /** Parts of the output and error files written and committed so far: the next write is part number this. */
  output_parts: number;
  error_parts: number;
  /** Set by a cancel request; the runner drains and then marks the batch cancelled. */
  cancel_requested: boolean;
  /**
   * The trace context of the request that made the batch, which each line's own trace links to; absent
   * with tracing off. Never on the wire.
   */
  traceparent?: string;
  /**
   * The event its owner's webhook is told of, written in the same step as the final status, so it is
   * made once and found by whichever replica delivers it. Never on the wire.
   */
  ended_event?: WebhookEvent;
  /** Seconds after creation its output and error files expire (`output_expires_after`); absent: never. */
  output_ttl_s?: number;
};

/** What a new batch is given; everything else starts empty. */
export type NewBatch = Pick<
  BatchRecord,
  'id' | 'owner' | 'endpoint' | 'input_file_id' | 'completion_window' | 'metadata' | 'created_at' | 'expires_at'
> &
  Pick<Partial<BatchRecord>, 'output_ttl_s' | 'fold_repeats'>;

/** A batch as it is first stored: validating, nothing fed, counted or written yet. */
export function newBatchRecord<E extends RunnerEndpointUrl>(
  batch: NewBatch & { endpoint: E },
): BatchRecord & { endpoint: E } {
  // Made while the request that makes the batch is the active span.
  const traceparent = currentTraceparent();
  return {
    ...batch,
    ...(traceparent ? { traceparent } : {}),
    status: 'validating',
    in_progress_at: null,
    finalizing_at: null,
    completed_at: null,
    failed_at: null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    output_file_id: null,
    error_file_id: null,
    errors: null,
    total: 0,
    completed: 0,
    failed: 0,
    fed_line: 0,
    output_parts: 0,
    error_parts: 0,
    cancel_requested: false,
  };
}

/**
 * The file-store purpose of a Message Batch's files (its requests, its results): they belong to the
 * batch, which deletes them with itself, so the Files API does not show them.
 */
export const MESSAGE_BATCH_FILES = 'message_batch';

/** The file-store purpose of a batch's plan: the batch's own, never shown by the Files API, deleted with it. */
export const BATCH_PLAN_FILES = 'batch_plan';

/** Purposes of the files a batch keeps for itself, which the Files API reports as missing. */
export const BATCH_OWN_FILES: ReadonlySet<string> = new Set([MESSAGE_BATCH_FILES, BATCH_PLAN_FILES]);

/** The purpose of the files a batch's results are written to. */
export const outputPurpose = (r: Pick<BatchRecord, 'endpoint'>): string =>
  r.endpoint === MESSAGES_URL ? MESSAGE_BATCH_FILES : 'batch_output';

/** An OpenAI batch (not a Message Batch): the only kind OpenAI's Batches API shows. */
export const isOpenAiBatch = (r: BatchRecord): r is BatchRecord & { endpoint: BatchEndpointUrl } =>
  r.endpoint !== MESSAGES_URL;

/** The statuses a batch ends in, each with the time it ended at and the event that says so. */
export type EndedStatus = 'completed' | 'failed' | 'expired' | 'cancelled';

/** The fields that end a batch: its final status, when, and (on failure) why. */
export type BatchEnding =
  | { status: 'completed'; completed_at: number }
  | { status: 'failed'; failed_at: number; errors: BatchError[]; total?: number }
  | { status: 'expired'; expired_at: number }
  | { status: 'cancelled'; cancelled_at: number };

const EVENT_TYPES: Record<EndedStatus, BatchEventType> = {
  completed: 'batch.completed',
  failed: 'batch.failed',
  expired: 'batch.expired',
  cancelled: 'batch.cancelled',
};

/**
 * The event a batch's end makes, in OpenAI's shape. A Message Batch's is the same, with its own id
 * (`msgbatch_…`): the type says how it ended, which Anthropic's one `ended` status does not.
 */
export const endedEvent = (batchId: string, status: EndedStatus): WebhookEvent => ({
  id: newEventId(),
  object: 'event',
  created_at: Math.floor(Date.now() / 1000),
  type: EVENT_TYPES[status],
  data: { id: batchId },
});
