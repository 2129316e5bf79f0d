import type { WebhookEvent } from '@conveyor/openai';

/** One event for one key's webhook: the key is named, so its URL and secret are read as it is sent. */
export interface WebhookDelivery {
  owner: string;
  event: WebhookEvent;
}

/**
 * Where batch events wait for delivery, durably, until their owner's webhook took them or they were
 * retried for long enough. Any API replica delivers them, whichever made them.
 */
export abstract class WebhookOutbox {
  /** Queues the event for delivery; queueing one already queued (the same event id) adds nothing. */
  abstract enqueue(delivery: WebhookDelivery): Promise<void>;
}
