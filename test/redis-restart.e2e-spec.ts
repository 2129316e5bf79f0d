import { PrivateRedis } from './support/private-redis.js';
import { TestPlatform } from './support/platform.js';

const MODEL = 'conveyor-tiny';

describe('Redis restarted under load (AOF)', () => {
  let redis: PrivateRedis;
  let platform: TestPlatform;
  const post = (body: object) =>
    fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'go' }], temperature: 0, ignore_eos: true, ...body }),
    });

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    platform = await TestPlatform.start({ workers: 1, env: { REDIS_URL: redis.url, PARALLEL: '1', WORKER_LOCK_MS: '3000', WORKER_STALLED_INTERVAL_MS: '1000' } });
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
    expect((await during.json()).error.type).toBe('service_unavailable');
    expect(Date.now() - t0).toBeLessThan(3000);
    expect((await fetch(`${platform.baseUrl}/ready`)).status).toBe(503);

    await new Promise((r) => setTimeout(r, 500));
    await redis.up();

    const replies = await Promise.all(pending);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    for (const body of await Promise.all(replies.map((r) => r.json()))) expect(body.usage.completion_tokens).toBe(400);
    const after = await post({ max_tokens: 3 });
    expect(after.status).toBe(200);
  });
});
