import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { hashKey } from '@conveyor/config';
import { batchKey, batchLeaseKey } from '@conveyor/queue';
import { chatLine, jsonl, submitBatch } from './support/batches.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { REDIS_URL, TestPlatform, exited, type ManagedProcess } from './support/platform.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const KEY = 'sk-batch-webhooks-failover-0123';
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const DATA_DIR = `/tmp/conveyor-test-batch-webhooks-failover-${process.pid}`;
const ENDED = ['"completed"', '"failed"', '"expired"', '"cancelled"'];

/**
 * Each round: how long after its batch is seen ended the replica that ended it is killed, and how long the
 * receiver takes to answer (a slow one is still being posted to when the kill lands, if the dead replica
 * was the one posting).
 */
const ROUNDS: Array<[killAfterMs: number, answerAfterMs: number]> = [
  [0, 0],
  [0, 0],
  [5, 0],
  [20, 0],
  [60, 0],
  [150, 0],
  [0, 1000],
  [100, 1000],
];

describe("a batch's event is delivered once, with one webhook-id, when the replica that ends the batch is killed", () => {
  let receiver: WebhookReceiver;
  let platform: TestPlatform;
  let redis: Redis;
  const apis: Array<{ proc: ManagedProcess; url: string }> = [];
  const alive = () => apis.filter((a) => a.proc.proc.exitCode === null && a.proc.proc.signalCode === null);
  let kills = 0;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start(SECRET);
    const config = writeDeploymentsFile({
      deployments: [{ id: 'conveyor-tiny', model: 'tiny', contextSize: 2048, parallel: 2, threads: 1 }],
      apiKeys: [{ name: 'main', sha256: hashKey(KEY), webhook: { url: receiver.url, secret: SECRET } }],
    });
    platform = await TestPlatform.start({
      env: {
        CONVEYOR_CONFIG: config,
        DATA_DIR,
        // The other replica takes a batch over within a second of its driver dying.
        BATCH_LEASE_MS: '800',
        BATCH_TICK_MS: '50',
        WEBHOOK_BACKOFF_MS: '200',
        // A delivery held by a dead replica is taken up by another about 7 s later (this plus 5 s).
        WEBHOOK_TIMEOUT_MS: '2000',
      },
    });
    const second = await platform.startExtraApi();
    apis.push({ proc: platform.api!, url: platform.baseUrl }, { proc: second.api, url: second.baseUrl });
    redis = new Redis(REDIS_URL);
  }, 120_000);

  afterAll(async () => {
    redis?.disconnect();
    await platform?.stop();
    await receiver?.stop();
    rmSync(DATA_DIR, { recursive: true, force: true });
  });

  /** Waits for the batch to end, watching which replica drives it; the last one seen is the one that ended it. */
  async function endedBy(id: string): Promise<number | null> {
    let holder: string | null = null;
    for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 5))) {
      const [lease, status] = await Promise.all([
        redis.get(batchLeaseKey(platform.prefix, id)),
        redis.hget(batchKey(platform.prefix, id), 'status'),
      ]);
      if (status && ENDED.includes(status)) return holder ? Number(holder.split(':')[1]) : null;
      if (lease) holder = lease;
    }
    throw new Error(`batch ${id} did not end`);
  }

  it.each(ROUNDS.map(([kill, answer], i) => [i + 1, kill, answer]))(
    'round %i: killed %i ms after the batch ends (receiver answering in %i ms): one event, one webhook-id',
    async (_round, killAfterMs, answerAfterMs) => {
      receiver.answerAfterMs = answerAfterMs as number;
      while (alive().length < 2) {
        const extra = await platform.startExtraApi();
        apis.push({ proc: extra.api, url: extra.baseUrl });
      }
      const client = new OpenAI({ baseURL: `${alive()[0]!.url}/v1`, apiKey: KEY, maxRetries: 0 });
      const batch = await submitBatch(client, jsonl(['a', 'b', 'c', 'd'].map((id) => chatLine(id))));
      const pid = await endedBy(batch.id);
      await new Promise((r) => setTimeout(r, killAfterMs as number));
      const driver = alive().find((a) => a.proc.proc.pid === pid);
      if (driver) {
        driver.proc.proc.kill('SIGKILL');
        await exited(driver.proc);
        kills++;
      }
      const received = await receiver.taken(batch.id, 2000, 90_000);
      expect(new Set(received.map((r) => r.webhookId)).size).toBe(1);
      expect(received.every((r) => r.verified && r.event.type === 'batch.completed')).toBe(true);
      // Posted again only when a replica died while posting it (its receiver had it, the queue did not know).
      expect(received.filter((r) => r.status === 200).length).toBeLessThanOrEqual(2);
    },
    120_000,
  );

  it('killed the replica that ended the batch in every round', () => {
    expect(kills).toBe(ROUNDS.length);
  });
});
