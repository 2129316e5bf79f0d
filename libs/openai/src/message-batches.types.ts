import type { BatchPlanReport } from './batch.types.js';
import type { Message, MessagesErrorBody } from './messages.types.js';

/** Anthropic's Message Batches API (`/v1/messages/batches`): its objects as they go over the wire. */

/** One request of `POST /v1/messages/batches`: `params` is a Messages body without `stream`. */
export interface MessageBatchRequest {
  custom_id: string;
  params: Record<string, unknown>;
}

export interface MessageBatchCreateBody {
  requests: MessageBatchRequest[];
}

export type MessageBatchProcessingStatus = 'in_progress' | 'canceling' | 'ended';

/** Requests by where they stand; the five always add up to the batch's requests. */
export interface MessageBatchRequestCounts {
  processing: number;
  succeeded: number;
  errored: number;
  canceled: number;
  expired: number;
}

/** A batch. Times are RFC 3339 strings; `results_url` is set once processing has ended. */
export interface MessageBatch {
  id: string;
  type: 'message_batch';
  processing_status: MessageBatchProcessingStatus;
  request_counts: MessageBatchRequestCounts;
  ended_at: string | null;
  created_at: string;
  expires_at: string;
  cancel_initiated_at: string | null;
  archived_at: string | null;
  results_url: string | null;
  /** Conveyor's extension: what the batch's plan did; absent until the batch is validated. */
  plan?: BatchPlanReport;
}

export interface DeletedMessageBatch {
  id: string;
  type: 'message_batch_deleted';
}

/** A page of `GET /v1/messages/batches`, newest first. */
export interface MessageBatchList {
  data: MessageBatch[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

export type MessageBatchResult =
  | { type: 'succeeded'; message: Message }
  | { type: 'errored'; error: MessagesErrorBody }
  | { type: 'canceled' }
  | { type: 'expired' };

/** One line of a batch's results (JSONL), in no particular order: `custom_id` names the request. */
export interface MessageBatchIndividualResponse {
  custom_id: string;
  result: MessageBatchResult;
}
