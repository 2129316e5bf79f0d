import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '@conveyor/config';
import type { WebhookEvent } from '@conveyor/openai';
import { WebhookAttemptFailed, WebhookSender } from './webhook-sender.js';
import { configuredKeys } from '../../../../test/support/api-key-fakes.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const event: WebhookEvent = {
  id: 'evt_0123456789abcdef01234567',
  object: 'event',
  created_at: 1_764_345_600,
  type: 'batch.completed',
  data: { id: 'batch_0123456789abcdef01234567' },
};

describe('WebhookSender', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((ok) => s.close(ok));
    }
  });

  /** A receiver on loopback answering `status` (never, for null), and the headers and body of what it got. */
  async function receiver(status: number | null) {
    const got: Array<{ headers: Record<string, string>; body: string }> = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        got.push({ headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])), body });
        if (status !== null) res.writeHead(status).end();
      });
    });
    servers.push(server);
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
  }

  /**
   * A sender whose attempts give up after `timeoutMs`: 30 s where the receiver answers (a loaded machine's
   * loopback answer can take far longer than usual), 300 ms where it never does and the timeout is the test.
   */
  const sender = (url: string | null, timeoutMs = 30_000) => {
    const config = loadConfig({ MODEL: 'tiny', WEBHOOK_TIMEOUT_MS: String(timeoutMs) });
    const apiKeys = [{ name: 'main', sha256: '0'.repeat(64), ...(url ? { webhook: { url, secret: SECRET } } : {}) }];
    return new WebhookSender(config, configuredKeys({ ...config, apiKeys }));
  };

  it('posts the event signed as Standard Webhooks, its id the webhook-id, and is done on a 2xx', async () => {
    const { url, got } = await receiver(204);
    expect(await sender(url).send({ owner: 'main', event })).toBe(true);
    expect(got).toHaveLength(1);
    expect(got[0]!.headers['webhook-id']).toBe(event.id);
    expect(new Webhook(SECRET).verify(got[0]!.body, got[0]!.headers)).toEqual(event);
  });

  it.each([
    ['a 500', 500, 'the receiver answered 500'],
    ['a redirect', 302, 'the receiver answered 302'],
    ['no answer within WEBHOOK_TIMEOUT_MS', null, 'timeout'],
  ])('fails the attempt on %s', async (_what, status, message) => {
    const { url } = await receiver(status);
    const attempt = sender(url, status === null ? 300 : undefined).send({ owner: 'main', event });
    await expect(attempt).rejects.toThrow(WebhookAttemptFailed);
    await expect(attempt).rejects.toThrow(message);
  });

  it('fails the attempt when nothing listens (connection refused)', async () => {
    const { url } = await receiver(200);
    for (const s of servers.splice(0)) await new Promise((ok) => s.close(ok));
    await expect(sender(url).send({ owner: 'main', event })).rejects.toThrow(/ECONNREFUSED/);
  });

  it('sends nothing, and has nothing to retry, for a key without a webhook', async () => {
    expect(await sender(null).send({ owner: 'main', event })).toBe(false);
    expect(await sender(null).send({ owner: 'gone', event })).toBe(false);
  });
});
