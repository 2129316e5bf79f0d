import { Inject, Injectable } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ApiKeyStore } from '../auth/api-key.store.js';
import type { WebhookDelivery } from './webhook-outbox.port.js';

/** A delivery attempt that did not land: it is retried, until the attempts run out. */
export class WebhookAttemptFailed extends Error {}

/**
 * Posts one event to its owner's webhook, signed as Standard Webhooks: `webhook-id` is the event's id on
 * every attempt (so a receiver drops a repeat), `webhook-timestamp` and `webhook-signature` are the
 * attempt's own. An answer other than 2xx, none within the timeout, or no connection fails the attempt.
 */
@Injectable()
export class WebhookSender {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly keys: ApiKeyStore,
  ) {}

  /** False when the owner has no webhook (now): nothing to send, and nothing to retry. */
  async send({ owner, event }: WebhookDelivery): Promise<boolean> {
    const webhook = (await this.keys.byName(owner))?.webhook;
    if (!webhook) return false;
    const body = JSON.stringify(event);
    const at = new Date();
    const signature = new Webhook(webhook.secret).sign(event.id, at, body);
    let status: number;
    try {
      const res = await fetch(webhook.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': event.id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.config.batch.webhook.timeoutMs),
      });
      status = res.status;
      // The body is not read: drop it, so the connection is free again.
      await res.body?.cancel();
    } catch (err) {
      const cause = (err as Error & { cause?: Error }).cause;
      throw new WebhookAttemptFailed(`${(err as Error).message}${cause ? ` (${cause.message})` : ''}`);
    }
    if (status < 200 || status > 299) throw new WebhookAttemptFailed(`the receiver answered ${status}`);
    return true;
  }
}
