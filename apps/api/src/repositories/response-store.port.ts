import type { ResponseInputItem, ResponseListedItem, ResponseObject } from '@conveyor/openai';

/** A stored response of the Responses API, with what retrieving, listing and continuing it need. */
export interface StoredResponse {
  /** Name of the API key that made it: the only one that may read, continue, cancel or delete it. */
  owner: string;
  response: ResponseObject;
  /** The request's own input items, each with an id (`GET /v1/responses/{id}/input_items`). */
  input: ResponseListedItem[];
  /**
   * The conversation a response continuing this one starts from: the items of the responses it
   * continued, its input, then its output once finished. Instructions are not carried on.
   */
  context: ResponseInputItem[];
  /** The deployment its job was queued on, to stop the job when it is cancelled. */
  deployment: string;
}

/**
 * Stored responses, kept for RESPONSE_TTL_MS after their last change. A response's status only
 * moves on from queued or in progress: once it is finished, failed or cancelled, it stays so.
 */
export abstract class ResponseStore {
  abstract save(record: StoredResponse): Promise<void>;
  abstract get(id: string): Promise<StoredResponse | null>;
  /**
   * Replaces the response (and the context, when given) if it is still queued or in progress; false
   * when it is not (cancelled meanwhile, deleted, expired), and then nothing changes.
   */
  abstract advance(response: ResponseObject, context?: readonly ResponseInputItem[]): Promise<boolean>;
  /** True when there was one to delete. */
  abstract delete(id: string): Promise<boolean>;
}
