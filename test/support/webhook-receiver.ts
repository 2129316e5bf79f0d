import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { WebhookEvent } from '@conveyor/openai';

/** One request the receiver took: its `webhook-id`, the event, whether it verified, and what it answered. */
export interface Received {
  /** The body and headers as they came, for another verifier to check (OpenAI's SDK's `webhooks.unwrap`). */
  raw: { body: string; headers: Record<string, string> };
  webhookId: string;
  event: WebhookEvent;
  verified: boolean;
  status: number;
}

/**
 * A webhook receiver on loopback, as a key's owner would run one: it checks each delivery's Standard
 * Webhooks signature with the `standardwebhooks` package's own `Webhook.verify`, and answers 500 to the
 * first `failFirst` deliveries of each event (by `webhook-id`) before it takes one.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  /** Attempts to refuse per event before the one taken; set by a test. */
  failFirst = 0;
  /** How long it takes to answer each delivery; set by a test. */
  answerAfterMs = 0;
  private readonly attempts = new Map<string, number>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly secret: string,
  ) {}

  static async start(secret: string): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | null = null;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const status = receiver!.take(Buffer.concat(chunks).toString(), req.headers);
        setTimeout(() => res.writeHead(status).end(), receiver!.answerAfterMs);
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    receiver = new WebhookReceiver(server, url, secret);
    return receiver;
  }

  private take(body: string, headers: IncomingHttpHeaders): number {
    const plain = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]));
    let verified = true;
    try {
      new Webhook(this.secret).verify(body, plain);
    } catch {
      verified = false;
    }
    const webhookId = plain['webhook-id'] ?? '';
    const attempt = (this.attempts.get(webhookId) ?? 0) + 1;
    this.attempts.set(webhookId, attempt);
    const status = !verified ? 400 : attempt <= this.failFirst ? 500 : 200;
    this.received.push({
      raw: { body, headers: plain },
      webhookId,
      event: JSON.parse(body) as WebhookEvent,
      verified,
      status,
    });
    return status;
  }

  /** What was received about the batch (or message batch) `id`. */
  about(id: string): Received[] {
    return this.received.filter((r) => r.event.data?.id === id);
  }

  /** Waits until `id` has a delivery the receiver took (2xx), then `settleMs` more for any repeat. */
  async taken(id: string, settleMs = 1500, timeoutMs = 60_000): Promise<Received[]> {
    for (const until = Date.now() + timeoutMs; !this.about(id).some((r) => r.status === 200);) {
      if (Date.now() > until) throw new Error(`no delivery taken for ${id}: ${JSON.stringify(this.about(id))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, settleMs));
    return this.about(id);
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((ok) => this.server.close(() => ok()));
  }
}
