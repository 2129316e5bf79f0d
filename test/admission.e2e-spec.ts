import { Queue } from 'bullmq';
import type { ChatCompletion, OpenAiErrorBody } from '@conveyor/openai';
import { deploymentQueueName } from '@conveyor/queue';
import { readJson } from './support/json.js';
import { EVENTUALLY_MS, waitFor } from './support/jobs.js';
import { PrivateRedis } from './support/private-redis.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';

const MODEL = 'conveyor-tiny';
const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
const post = (baseUrl: string) =>
  fetch(`${baseUrl}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('admission: the queue-depth limit holds for requests that arrive together, on every replica', () => {
  let platform: TestPlatform;
  let secondUrl: string;

  beforeAll(async () => {
    // No worker: every admitted request waits in the queue until its queue deadline, long enough that a
    // loaded machine has answered every refusal well before it.
    platform = await TestPlatform.start({ workers: 0, env: { MAX_QUEUE_DEPTH: '5', QUEUE_TIMEOUT_MS: '10000' } });
    ({ baseUrl: secondUrl } = await platform.startExtraApi());
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('admits exactly MAX_QUEUE_DEPTH of 50 simultaneous requests across two API replicas, refusing the rest at once', async () => {
    const replies = Array.from({ length: 50 }, (_, i) => post(i % 2 ? secondUrl : platform.baseUrl));
    // A refusal comes back at once; an admitted request waits for a worker (there is none) until its deadline.
    // So the first 45 answers are the refusals, all of them before any admitted request is withdrawn.
    const answered: number[] = [];
    replies.forEach((reply, i) => void reply.then(() => answered.push(i)));
    await waitFor(async () => (answered.length >= 45 ? true : undefined), EVENTUALLY_MS, 'the first 45 answers');
    const first = answered.slice(0, 45);
    const refused = await Promise.all(first.map((i) => replies[i]!));
    const admitted = replies.filter((_, i) => !first.includes(i));
    expect(admitted).toHaveLength(5);
    for (const res of refused) {
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('1');
      expect((await readJson<OpenAiErrorBody>(res)).error.code).toBe('queue_full');
    }
    const queue = new Queue(deploymentQueueName(MODEL), { connection: { url: REDIS_URL }, prefix: platform.prefix });
    // Default-tier requests wait prioritized in BullMQ (behind the priority tier's, ahead of batch lines).
    expect(await queue.getJobCountByTypes('waiting', 'prioritized')).toBe(5);
    await queue.close();
    // Withdrawn at the queue deadline: a 503 that says when to retry.
    for (const res of await Promise.all(admitted)) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
    }
  });
});

describe('an API started while Redis is down', () => {
  let redis: PrivateRedis;
  let platform: TestPlatform;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    await redis.down();
    platform = await TestPlatform.start({ workers: 0, env: { REDIS_URL: redis.url } });
  });

  afterAll(async () => {
    await platform?.stop();
    await redis?.stop();
  });

  it('answers 503 with Retry-After at once, then serves as soon as Redis is back', async () => {
    // At once rather than at the request's deadline (10 minutes): within the jest timeout at all.
    for (let i = 0; i < 3; i++) {
      const res = await post(platform.baseUrl);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect((await readJson<OpenAiErrorBody>(res)).error.type).toBe('service_unavailable');
    }
    await redis.up();
    await platform.startWorker();
    let res: Response | null = null;
    const until = Date.now() + EVENTUALLY_MS;
    while (Date.now() < until) {
      res = await post(platform.baseUrl);
      if (res.status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(res?.status).toBe(200);
    expect((await readJson<ChatCompletion>(res!)).usage.completion_tokens).toBe(2);
  });
});
