import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import OpenAI from 'openai';
import { hashKey } from '@conveyor/config';
import type { WebhookDeliveryObject } from '@conveyor/openai';
import { chatLine, jsonl, submitBatch, waitForBatch } from './support/batches.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { TestPlatform } from './support/platform.js';
import { WebhookReceiver, type Received } from './support/webhook-receiver.js';

const KEY = 'sk-batch-webhooks-0123456789';
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const DATA_DIR = `/tmp/conveyor-test-batch-webhooks-${process.pid}`;
/** Loads no model; each of its replies takes about two seconds, so a batch of them is still running when cancelled or out of time. */
const SLOW = 'conveyor-slow';
const slowLine = (id: string) => chatLine(id, { model: SLOW, max_tokens: 40 });

/** Every delivery a receiver took for one event: one, verified, taken at the first attempt unless told to refuse. */
async function expectOneEvent(received: Received[], id: string, type: string): Promise<void> {
  expect(received.map((r) => r.event.type)).toEqual([type]);
  const [only] = received;
  expect(only).toMatchObject({ verified: true, status: 200, event: { object: 'event', type, data: { id } } });
  expect(only!.webhookId).toBe(only!.event.id);
  expect(only!.event.id).toMatch(/^evt_[0-9a-f]{24}$/);
  expect(Math.abs(only!.event.created_at - Date.now() / 1000)).toBeLessThan(120);
  // OpenAI's own SDK takes it as one of its webhook events, signature checked.
  const sdk = new OpenAI({ apiKey: 'unused' });
  expect(await sdk.webhooks.unwrap(only!.raw.body, only!.raw.headers, SECRET)).toEqual(only!.event);
}

describe("batch events posted to the owner key's webhook, signed as Standard Webhooks", () => {
  let receiver: WebhookReceiver;
  let platform: TestPlatform;
  let client: OpenAI;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start(SECRET);
    const config = writeDeploymentsFile({
      deployments: [
        { id: 'conveyor-tiny', model: 'tiny', contextSize: 2048, parallel: 2, threads: 1 },
        {
          id: SLOW,
          engine: 'simulated',
          simulated: { ttftMs: 0, tpotMs: 50, outputTokens: 40, text: 'slow' },
          parallel: 2,
          contextSize: 1024,
        },
      ],
      apiKeys: [{ name: 'main', sha256: hashKey(KEY), webhook: { url: receiver.url, secret: SECRET } }],
    });
    platform = await TestPlatform.start({
      env: {
        CONVEYOR_CONFIG: config,
        DATA_DIR,
        BATCH_TICK_MS: '50',
        // Retries within a second or two, so a receiver refusing a few attempts is served within the test.
        WEBHOOK_BACKOFF_MS: '200',
        WEBHOOK_TIMEOUT_MS: '2000',
      },
    });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await receiver?.stop();
    rmSync(DATA_DIR, { recursive: true, force: true });
  });

  afterEach(() => {
    receiver.failFirst = 0;
  });

  /** The batch's webhook deliveries, once `done` holds for one (the receiver has answered before the queue records it). */
  const deliveriesOf = async (id: string, done: (d: WebhookDeliveryObject) => boolean) => {
    for (const until = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 100))) {
      const res = await fetch(`${platform.baseUrl}/v1/batches/${id}/webhook_deliveries`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      expect(res.status).toBe(200);
      const { data } = (await res.json()) as { data: WebhookDeliveryObject[] };
      if (data.some(done) || Date.now() > until) return data;
    }
  };

  it('a batch that completes: one batch.completed event, signed, its webhook-id the event id', async () => {
    const batch = await submitBatch(client, jsonl([chatLine('a'), chatLine('b')]));
    expect((await waitForBatch(client, batch.id)).status).toBe('completed');
    await expectOneEvent(await receiver.taken(batch.id), batch.id, 'batch.completed');
    const [delivery] = await deliveriesOf(batch.id, (d) => d.status === 'delivered');
    expect(delivery).toMatchObject({ attempts: 1, last_error: null, type: 'batch.completed' });
  });

  it('a batch whose input fails validation: one batch.failed event', async () => {
    const batch = await submitBatch(client, jsonl([chatLine('a'), 'not json']));
    expect((await waitForBatch(client, batch.id)).status).toBe('failed');
    await expectOneEvent(await receiver.taken(batch.id), batch.id, 'batch.failed');
  });

  it('a batch cancelled while it runs: one batch.cancelled event, once it has drained', async () => {
    const batch = await submitBatch(client, jsonl(Array.from({ length: 6 }, (_, i) => slowLine(`s${i}`))));
    await waitForBatch(client, batch.id, (b) => b.status === 'in_progress');
    await client.batches.cancel(batch.id);
    const ended = await waitForBatch(client, batch.id, undefined, 60_000);
    // Lines still waiting never ran: the cancel took effect mid-batch.
    expect(ended).toMatchObject({ status: 'cancelled', request_counts: { total: 6 } });
    expect(ended.request_counts!.completed).toBeLessThan(6);
    await expectOneEvent(await receiver.taken(batch.id), batch.id, 'batch.cancelled');
  });

  it('a batch past its completion window: one batch.expired event', async () => {
    const batch = await submitBatch(client, jsonl(Array.from({ length: 6 }, (_, i) => slowLine(`e${i}`))), '2s');
    const ended = await waitForBatch(client, batch.id, undefined, 60_000);
    expect(ended).toMatchObject({ status: 'expired', request_counts: { total: 6 } });
    expect(ended.request_counts!.completed).toBeLessThan(6);
    await expectOneEvent(await receiver.taken(batch.id), batch.id, 'batch.expired');
  });

  it("an Anthropic Message Batch that ends: one batch.completed event with the message batch's id", async () => {
    const res = await fetch(`${platform.baseUrl}/v1/messages/batches`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({
        requests: [
          {
            custom_id: 'm1',
            params: { model: 'conveyor-tiny', max_tokens: 4, messages: [{ role: 'user', content: 'Hello' }] },
          },
        ],
      }),
    });
    const { id } = (await res.json()) as { id: string };
    expect(id).toMatch(/^msgbatch_/);
    await expectOneEvent(await receiver.taken(id), id, 'batch.completed');
  });

  it('a receiver failing the first attempts: retried with the same webhook-id until one is taken, then no more', async () => {
    receiver.failFirst = 3;
    const batch = await submitBatch(client, jsonl([chatLine('r')]));
    expect((await waitForBatch(client, batch.id)).status).toBe('completed');
    const received = await receiver.taken(batch.id, 2000);
    expect(received.map((r) => r.status)).toEqual([500, 500, 500, 200]);
    expect(new Set(received.map((r) => r.webhookId)).size).toBe(1);
    expect(received.every((r) => r.verified && r.event.type === 'batch.completed')).toBe(true);
    // The batch's deliveries say so: delivered at the fourth attempt, the refusals' reason kept.
    const deliveries = await deliveriesOf(batch.id, (d) => d.status === 'delivered');
    expect(deliveries).toEqual([
      {
        object: 'webhook_delivery',
        event_id: received[0]!.webhookId,
        type: 'batch.completed',
        status: 'delivered',
        attempts: 4,
        last_error: expect.stringContaining('500'),
        finished_at: expect.any(Number),
      },
    ]);
  });
});
