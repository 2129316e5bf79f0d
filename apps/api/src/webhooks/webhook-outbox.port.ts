import type { WebhookEvent } from '@conveyor/openai';

/** One event for one key's webhook: the key is named, so its URL and secret are read as it is sent. */
export interface WebhookDelivery {
  owner: string;
  event: WebhookEvent;
}

/** Where one event's delivery stands, as the outbox knows it. */
export interface WebhookDeliveryState {
  status: 'pending' | 'retrying' | 'delivered' | 'failed';
  attempts: number;
  lastError: string | null;
  /** Milliseconds since the epoch of the last attempt's end, once delivered or given up. */
  finishedAt: number | null;
}

/**
 * Where batch events wait for delivery, durably, until their owner's webhook took them or they were
 * retried for long enough. Any API replica delivers them, whichever made them.
 */
export abstract class WebhookOutbox {
  /** Queues the event for delivery; queueing one already queued (the same event id) adds nothing. */
  abstract enqueue(delivery: WebhookDelivery): Promise<void>;
  /** Where the event's delivery stands; null where it was never queued (its owner had no webhook) or has been forgotten. */
  abstract state(eventId: string): Promise<WebhookDeliveryState | null>;
}
