import type { ChatCompletion, OpenAiErrorBody } from '@conveyor/openai';
import { readJson } from './support/json.js';
import { nonJsonLines } from './support/logs.js';
import { PrivateRedis } from './support/private-redis.js';
import { TestPlatform } from './support/platform.js';

/** Longer than the reconnect delays once grew to in this time: 15 s before a worker fetched again. */
const OUTAGE_MS = 10_000;

/** A streamed reply read as it comes: when its first chunk arrived, and whether it ended with [DONE]. */
async function readStream(res: Response): Promise<{ firstChunkAt: number; done: boolean }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let firstChunkAt = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (!firstChunkAt && text.includes('"content"')) firstChunkAt = Date.now();
  }
  return { firstChunkAt, done: text.trimEnd().endsWith('data: [DONE]') };
}

const MODEL = 'conveyor-tiny';

describe('Redis restarted under load (AOF)', () => {
  let redis: PrivateRedis;
  let platform: TestPlatform;
  const post = (body: object) =>
    fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: 'user', content: 'go' }],
        temperature: 0,
        ignore_eos: true,
        ...body,
      }),
    });

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    platform = await TestPlatform.start({
      workers: 1,
      env: { REDIS_URL: redis.url, PARALLEL: '1', WORKER_LOCK_MS: '3000', WORKER_STALLED_INTERVAL_MS: '1000' },
    });
  });

  afterAll(async () => {
    await platform?.stop();
    await redis?.stop();
  });

  it('answers 503 quickly while Redis is down, then resumes on its own with the queued requests intact', async () => {
    // One running, three queued behind it.
    const pending = Array.from({ length: 4 }, () => post({ max_tokens: 400 }));
    await new Promise((r) => setTimeout(r, 300));
    await redis.down();

    const t0 = Date.now();
    const during = await post({ max_tokens: 2 });
    expect(during.status).toBe(503);
    expect((await readJson<OpenAiErrorBody>(during)).error.type).toBe('service_unavailable');
    // Refused rather than held until Redis returns (the outage outlasts this bound): a slow machine's room.
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect((await fetch(`${platform.baseUrl}/ready`)).status).toBe(503);
    // Every route that reads Redis is unavailable as the rest is, not a server error: the model list (the
    // workers' heartbeats), the batch lists and the metrics' gauges.
    for (const path of ['/v1/models', `/v1/models/${MODEL}`, '/v1/batches', '/metrics']) {
      const models = await fetch(`${platform.baseUrl}${path}`);
      expect({ path, status: models.status, retryAfter: models.headers.get('retry-after') }).toEqual({
        path,
        status: 503,
        retryAfter: '1',
      });
      expect((await readJson<OpenAiErrorBody>(models)).error).toMatchObject({
        type: 'service_unavailable',
        code: 'service_unavailable',
        param: null,
      });
    }
    // Anthropic's Message Batches: Anthropic's answer for a server that cannot take the request now (529
    // overloaded_error, which its clients retry), with the same Retry-After.
    const messageBatches = await fetch(`${platform.baseUrl}/v1/messages/batches`);
    expect({ status: messageBatches.status, retryAfter: messageBatches.headers.get('retry-after') }).toEqual({
      status: 529,
      retryAfter: '1',
    });
    expect(await messageBatches.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });

    await new Promise((r) => setTimeout(r, 500));
    await redis.up();

    const replies = await Promise.all(pending);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    for (const body of await Promise.all(replies.map((r) => readJson<ChatCompletion>(r))))
      expect(body.usage.completion_tokens).toBe(400);
    const after = await post({ max_tokens: 3 });
    expect(after.status).toBe(200);
  });

  it(`resumes within about 2 s of Redis returning after ${OUTAGE_MS / 1000} s away, the queued requests completing, every log line JSON`, async () => {
    // One running (its generation ends during the outage; its end waits for Redis), two streamed ones
    // queued behind it: their first text shows when a worker takes jobs again.
    const running = post({ max_tokens: 2000 });
    await new Promise((r) => setTimeout(r, 100));
    const queued = [post({ max_tokens: 20, stream: true }), post({ max_tokens: 20, stream: true })].map((p) =>
      p.then(readStream),
    );
    await new Promise((r) => setTimeout(r, 200));
    await redis.down();

    // Refused at once, and cleanly, all the while.
    const refusals: number[] = [];
    for (const until = Date.now() + OUTAGE_MS; Date.now() < until; await new Promise((r) => setTimeout(r, 250))) {
      const t = Date.now();
      const res = await post({ max_tokens: 2 });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      refusals.push(Date.now() - t);
    }
    expect(Math.max(...refusals)).toBeLessThan(10_000);

    await redis.up();
    const back = Date.now();
    const [first, second] = await Promise.all(queued);
    const done = await running;
    const ended = Date.now();
    // New requests are answered again, by the same worker that waited out the outage (timed from when it
    // is free: the replies before it take what the machine's speed makes them).
    const asked = Date.now();
    let answeredAt = 0;
    while (!answeredAt) {
      const res = await post({ max_tokens: 2 });
      if (res.status === 200) answeredAt = Date.now();
      else await new Promise((r) => setTimeout(r, 50));
    }
    const resumedMs = Math.min(first.firstChunkAt, second.firstChunkAt) - back;
    console.log(
      `Redis away ${OUTAGE_MS} ms (${refusals.length} requests refused with 503 meanwhile): a queued request's first ` +
        `text ${resumedMs} ms after Redis returned, every reply in ${ended - back} ms, then a new request answered ` +
        `${answeredAt - asked} ms after it was sent`,
    );

    expect(done.status).toBe(200);
    expect((await readJson<ChatCompletion>(done)).usage.completion_tokens).toBe(2000);
    expect([first.done, second.done]).toEqual([true, true]);
    // Resumed on its own: the figures are printed above; the bounds only catch a platform that never resumed.
    expect(resumedMs).toBeLessThan(30_000);
    expect(answeredAt - asked).toBeLessThan(30_000);

    // What the API and the worker printed while Redis was away (and all along) is JSON, line by line.
    for (const p of [platform.api!, ...platform.workers]) expect(nonJsonLines(p)).toEqual([]);
    expect(platform.api!.output.join('')).toContain('reconnecting');
  }, 180_000);
});
