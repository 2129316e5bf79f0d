/** The fields OpenAI's Usage API groups by, and `route`, which this platform adds. */
export type UsageGroupBy = 'project_id' | 'user_id' | 'api_key_id' | 'model' | 'batch' | 'service_tier' | 'route';

/**
 * One result of a completions usage bucket (`GET /v1/organization/usage/completions`), as OpenAI's Usage
 * API shapes it. A field the query did not group by is null. `api_key_id` is the key's name, never the key;
 * `model` the deployment's id.
 */
export interface UsageCompletionsResult {
  object: 'organization.usage.completions.result';
  input_tokens: number;
  output_tokens: number;
  input_cached_tokens: number;
  input_audio_tokens: number;
  output_audio_tokens: number;
  num_model_requests: number;
  project_id: string | null;
  user_id: string | null;
  api_key_id: string | null;
  model: string | null;
  batch: boolean | null;
  service_tier: string | null;
  /** Only when grouped by route: the route that accepted the requests (`/v1/chat/completions`, ...). */
  route?: string | null;
}

/** A time bucket: its bounds in seconds since the epoch, and its results. */
export interface UsageBucket {
  object: 'bucket';
  start_time: number;
  end_time: number;
  results: UsageCompletionsResult[];
}

/** A page of buckets; `next_page` is the `page` of the buckets that follow. */
export interface UsageCompletionsPage {
  object: 'page';
  data: UsageBucket[];
  has_more: boolean;
  next_page: string | null;
}
