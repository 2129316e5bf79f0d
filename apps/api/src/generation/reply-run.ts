import type { FinishReason, ReplyEvent } from '@conveyor/queue';

/** Who a reply is, as every chunk and response body names it. */
export interface ReplyIdentity {
  id: string;
  model: string;
  created: number;
}

/** Reply events that carry output; `error` events are raised as exceptions instead. */
export type OutputEvent = Exclude<ReplyEvent, { type: 'error' }>;

export type EndEvent = Extract<ReplyEvent, { type: 'end' }>;
export type DeltaEvent = Extract<ReplyEvent, { type: 'delta' }>;
export type StartEvent = Extract<ReplyEvent, { type: 'start' }>;

/** A request whose job is queued (or running): its identity, and its reply's events as they come. */
export interface ReplyRun {
  who: ReplyIdentity;
  events: AsyncGenerator<OutputEvent, void, undefined>;
}

/** Every choice's finish reason from an end event. */
export const finishReasonsOf = (event: EndEvent): FinishReason[] => event.finishReasons ?? [event.finishReason];
