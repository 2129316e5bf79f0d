import type { FinishReason, QueueTier, QueuedJobData, ReplyEvent } from '@conveyor/queue';

/** Who a reply is, as every chunk and response body names it. */
export interface ReplyIdentity {
  id: string;
  model: string;
  created: number;
  /** The service tier it is served at, which the reply echoes; absent: `default`. */
  tier?: QueueTier;
}

/** Reply events that carry output; `error` events are raised as exceptions instead. */
export type OutputEvent = Exclude<ReplyEvent, { type: 'error' }>;

export type EndEvent = Extract<ReplyEvent, { type: 'end' }>;
export type DeltaEvent = Extract<ReplyEvent, { type: 'delta' }>;
export type StartEvent = Extract<ReplyEvent, { type: 'start' }>;

/** A request whose job is queued (or running): its identity, and its reply's events as they come. */
export interface ReplyRun {
  who: ReplyIdentity;
  /** The job's max_tokens, when it has one: a reply that ended shorter was not cut by it. */
  maxTokens?: number;
  events: AsyncGenerator<OutputEvent, void, undefined>;
  /**
   * What the HTTP reply says of the request's admission before any of it is sent (its key's token quota:
   * `x-ratelimit-*-tokens`); empty for a key without one, and for a reply resumed.
   */
  headers: Record<string, string>;
}

/** Every choice's finish reason from an end event. */
export const finishReasonsOf = (event: EndEvent): FinishReason[] => event.finishReasons ?? [event.finishReason];

/** A job's max_tokens, when it is a generation job that has one. */
export const maxTokensOf = (job: QueuedJobData): number | undefined =>
  'maxTokens' in job && typeof job.maxTokens === 'number' ? job.maxTokens : undefined;
