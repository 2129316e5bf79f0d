import OpenAI from 'openai';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { OpenAiErrorBody } from '@conveyor/openai';
import { affinityQueueName, routeQueuesKey } from '@conveyor/queue';
import { chatLine, jsonl, submitBatch, waitForBatch } from './support/batches.js';
import { readJson } from './support/json.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';
import type { DeploymentSignal, PoolSignal, WorkBreakdown } from '../apps/api/src/scaling/scaling-signal.js';
import { EVENTUALLY_MS } from './support/jobs.js';

const MODEL = 'conveyor-tiny';
const INFLIGHT = 8;

describe('the pending-work signal autoscaling reads, for each kind of work', () => {
  let platform: TestPlatform;
  let client: OpenAI;
  let redis: Redis;

  const deploymentSignal = async () =>
    readJson<DeploymentSignal>(await fetch(`${platform.baseUrl}/scaling/deployments/${MODEL}`));
  const poolSignal = async () => readJson<PoolSignal>(await fetch(`${platform.baseUrl}/scaling/pools/cpu`));
  /** The deployment's `conveyor_pending_work` sample on /metrics. */
  const gauge = async (): Promise<number> => {
    const text = await (await fetch(`${platform.baseUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith('conveyor_pending_work{') && l.includes(`deployment="${MODEL}"`));
    expect(line).toContain('pool="cpu"');
    return Number(line!.split(' ').at(-1));
  };
  /** The deployment's signal once `done` holds of it (the batch runner and the queue move on their own). */
  const signalWhen = async (done: (s: WorkBreakdown) => boolean, timeoutMs = EVENTUALLY_MS): Promise<WorkBreakdown> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const signal = await deploymentSignal();
      if (done(signal)) return signal;
      if (Date.now() > until) throw new Error(`signal still ${JSON.stringify(signal)} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  beforeAll(async () => {
    // No worker at first: the work waits where it is put, and nothing runs it.
    platform = await TestPlatform.start({
      workers: 0,
      env: {
        BATCH_INFLIGHT: String(INFLIGHT),
        QUEUE_TIMEOUT_MS: '3000',
        DATA_DIR: `/tmp/conveyor-test-data-${process.pid}`,
      },
    });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused' });
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    redis?.disconnect();
    await platform?.stop();
  });

  it('is 0 for an idle deployment and pool, and answers 404 for a pool or deployment that does not exist', async () => {
    expect(await deploymentSignal()).toEqual({
      deployment: MODEL,
      pool: 'cpu',
      value: 0,
      waiting: 0,
      batch_queued: 0,
      routed: 0,
      running: 0,
      batch_unqueued: 0,
    });
    expect(await poolSignal()).toMatchObject({ pool: 'cpu', value: 0, deployments: { [MODEL]: { value: 0 } } });
    expect((await fetch(`${platform.baseUrl}/scaling/pools/gpu`).then((r) => r.json())) as WorkBreakdown).toMatchObject(
      {
        value: 0,
      },
    );
    for (const path of ['pools/tpu', 'deployments/nope']) {
      const res = await fetch(`${platform.baseUrl}/scaling/${path}`);
      expect(res.status).toBe(404);
      expect((await readJson<OpenAiErrorBody>(res)).error.type).toBe('not_found_error');
    }
  });

  it('counts interactive requests waiting with no worker, until they are withdrawn at their deadline', async () => {
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    const post = () =>
      fetch(`${platform.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
    const replies = [post(), post()];
    expect(await signalWhen((s) => s.waiting === 2)).toMatchObject({ value: 2, batch_queued: 0, batch_unqueued: 0 });
    expect(await poolSignal()).toMatchObject({ value: 2, waiting: 2 });
    for (const res of await Promise.all(replies)) expect(res.status).toBe(503);
    expect(await signalWhen((s) => s.value === 0)).toMatchObject({ waiting: 0 });
  });

  it("counts jobs waiting in a worker's own queue", async () => {
    // As routing leaves it: a job in the queue of the worker holding its prompt, the worker named in
    // the deployment's set. No worker is live, so none takes it or sends it on.
    const worker = 'host_42';
    const routed = new Queue(affinityQueueName(MODEL, worker), {
      connection: { url: REDIS_URL },
      prefix: platform.prefix,
    });
    try {
      await redis.sadd(routeQueuesKey(platform.prefix, MODEL), worker);
      await routed.add('generate', {}, { jobId: 'routed-1' });
      expect(await deploymentSignal()).toMatchObject({ value: 1, routed: 1, waiting: 0 });
      await routed.obliterate({ force: true });
      await redis.srem(routeQueuesKey(platform.prefix, MODEL), worker);
      expect(await deploymentSignal()).toMatchObject({ value: 0, routed: 0 });
    } finally {
      await routed.close();
    }
  });

  it('counts a whole batch larger than its window, queued lines and lines still in its file, and 0 once it is cancelled', async () => {
    const lines = 40;
    const created = await submitBatch(client, jsonl(Array.from({ length: lines }, (_, i) => chatLine(`c-${i}`))));
    // With no live worker the window is BATCH_INFLIGHT: the rest of the batch is only in its file.
    const signal = await signalWhen((s) => s.batch_queued === INFLIGHT);
    expect(signal).toMatchObject({
      value: lines,
      waiting: 0,
      batch_queued: INFLIGHT,
      routed: 0,
      running: 0,
      batch_unqueued: lines - INFLIGHT,
    });
    expect(await poolSignal()).toMatchObject({ value: lines, batch_unqueued: lines - INFLIGHT });
    expect(await gauge()).toBe(lines);
    await client.batches.cancel(created.id);
    expect((await waitForBatch(client, created.id)).status).toBe('cancelled');
    expect(await deploymentSignal()).toMatchObject({ value: 0, batch_queued: 0, batch_unqueued: 0 });
    expect(await gauge()).toBe(0);
  });

  it('scales for a batch submitted to a pool with no worker, and falls back to 0 when the batch ends', async () => {
    const lines = 20;
    const created = await submitBatch(client, jsonl(Array.from({ length: lines }, (_, i) => chatLine(`e-${i}`))));
    expect(await signalWhen((s) => s.batch_queued === INFLIGHT)).toMatchObject({
      value: lines,
      batch_unqueued: lines - INFLIGHT,
    });
    // What the autoscaler then does: a worker starts, and runs the batch.
    await platform.startWorker();
    const batch = await waitForBatch(client, created.id, undefined, 60_000);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: lines, completed: lines, failed: 0 });
    expect(await signalWhen((s) => s.value === 0)).toMatchObject({
      value: 0,
      waiting: 0,
      batch_queued: 0,
      routed: 0,
      running: 0,
      batch_unqueued: 0,
    });
  });
});
