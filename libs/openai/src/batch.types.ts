import type { OpenAiErrorBody } from './error.types.js';

export type FilePurpose = 'batch' | 'batch_output' | 'user_data';

export interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: FilePurpose;
  status: 'processed';
  status_details: null;
  /** When the file is removed (and answers 404 from then on); null: kept until deleted. */
  expires_at: number | null;
}

export interface FileDeleted {
  id: string;
  object: 'file';
  deleted: true;
}

/** The routes a batch may run; each line's `url` must be the batch's `endpoint`. */
export const BATCH_ENDPOINT_URLS = [
  '/v1/chat/completions',
  '/v1/completions',
  '/v1/embeddings',
  '/v1/rerank',
  '/v1/responses',
  '/v1/score',
] as const;
export type BatchEndpointUrl = (typeof BATCH_ENDPOINT_URLS)[number];

export type BatchStatus =
  'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

export interface BatchError {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

export interface Batch {
  id: string;
  object: 'batch';
  endpoint: BatchEndpointUrl;
  errors: { object: 'list'; data: BatchError[] } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
  /** Conveyor's extension: what the batch's plan did; absent until the batch is validated. */
  plan?: BatchPlanReport;
}

/**
 * A batch as the admin sees it (`GET /v1/admin/batches`): every key's, with the key's name. Anthropic's
 * Message Batches are among them, in this shape, with the endpoint their requests run on.
 */
export type AdminBatch = Omit<Batch, 'endpoint'> & {
  endpoint: BatchEndpointUrl | '/v1/messages';
  /** The name of the API key that created it. */
  owner: string;
};

/**
 * What a batch's plan did (a Conveyor extension, on OpenAI's batches and Anthropic's Message Batches):
 * lines that begin alike were fed together, and lines asked again were answered by one run.
 */
export interface BatchPlanReport {
  /** Groups of lines sharing a beginning (system prompt, tools, leading turns). */
  groups: number;
  /** Lines answered by an identical line's result instead of running (greedy or seeded lines only). */
  repeats_folded: number;
  /** Prompt tokens of the lines written so far. */
  prompt_tokens: {
    /** Of the lines that ran. */
    total: number;
    /** Of those, reused from a worker's prompt cache instead of evaluated. */
    cached: number;
    /** Of the folded repeats: never evaluated. */
    folded: number;
  };
  /** Prompt tokens not evaluated thanks to reuse and folding: cached + folded. */
  prompt_tokens_saved: number;
}

/** One line of a batch output or error file. */
export interface BatchOutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: unknown } | null;
  error: { code: string; message: string } | null;
}

export interface ListPage<T> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export type { OpenAiErrorBody };

/** The events OpenAI's webhooks post when a batch ends, one per ending status. */
export type BatchEventType = 'batch.completed' | 'batch.failed' | 'batch.expired' | 'batch.cancelled';

/** A webhook event as OpenAI posts it: `data` names the object it is about, which the receiver reads itself. */
export interface WebhookEvent {
  /** `evt_…`: also the delivery's `webhook-id`, the same on every retry, so a receiver can drop repeats. */
  id: string;
  object: 'event';
  created_at: number;
  type: BatchEventType;
  data: { id: string };
}

/**
 * How the delivery of one of a batch's events to its owner's webhook stands (`GET
 * /v1/batches/{id}/webhook_deliveries`, the platform's own): waiting for its first attempt, waiting to be
 * tried again after a failed one, taken by the receiver, or given up after the last attempt.
 */
export interface WebhookDeliveryObject {
  object: 'webhook_delivery';
  /** The event's id, which is also every attempt's `webhook-id`. */
  event_id: string;
  type: BatchEventType;
  status: 'pending' | 'retrying' | 'delivered' | 'failed';
  /** Attempts made so far. */
  attempts: number;
  /** Why the last failed attempt failed (a delivered event keeps it where one failed first). */
  last_error: string | null;
  /** Unix seconds of the attempt the receiver took, or of the last one where it was given up. */
  finished_at: number | null;
}
