import { exited, TestPlatform, type ManagedProcess } from './support/platform.js';
import { PrivateRedis } from './support/private-redis.js';

const GRACE_MS = 2000;

/**
 * SIGTERMs the process; resolves with its exit code. The process's own deadlines (GRACE_MS, then 5 s to
 * close: CLOSE_DEADLINE_MS, and the worker's) end it within 7 s; 30 s is far past them, so a process that
 * does not keep to them fails here, and a loaded machine's late timers do not.
 */
async function terminate(p: ManagedProcess): Promise<{ code: number | null }> {
  const done = exited(p);
  p.proc.kill('SIGTERM');
  const code = await Promise.race([done, new Promise<'running'>((r) => setTimeout(() => r('running'), 30_000))]);
  if (code === 'running') {
    p.proc.kill('SIGKILL');
    throw new Error(`still running 30 s after SIGTERM:\n${p.output.join('').slice(-2000)}`);
  }
  return { code };
}

/** Opens a streamed reply that runs long, and waits for its first chunk. */
async function openStream(platform: TestPlatform): Promise<Response> {
  const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'conveyor-tiny',
      messages: [{ role: 'user', content: 'go' }],
      max_tokens: 3000,
      ignore_eos: true,
      stream: true,
    }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  await reader.read();
  return res;
}

describe('shutdown with Redis gone', () => {
  let redis: PrivateRedis | undefined;
  let platform: TestPlatform | undefined;

  afterEach(async () => {
    await platform?.stop();
    await redis?.stop();
    platform = redis = undefined;
  });

  const start = async (workers: number) => {
    redis = await PrivateRedis.start();
    platform = await TestPlatform.start({
      workers,
      env: {
        REDIS_URL: redis.url,
        PARALLEL: '1',
        API_SHUTDOWN_GRACE_MS: String(GRACE_MS),
        WORKER_SHUTDOWN_GRACE_MS: String(GRACE_MS),
      },
    });
    return platform;
  };

  // At different moments: nothing open, a reply open when Redis went, and after Redis came back.
  it.each(['idle', 'reply open', 'redis back'] as const)(
    'an API exits on SIGTERM within its grace period and close deadline (%s)',
    async (moment) => {
      const p = await start(moment === 'reply open' ? 1 : 0);
      if (moment === 'reply open') await openStream(p);
      await redis!.down();
      if (moment === 'redis back') {
        await new Promise((r) => setTimeout(r, 1500));
        await redis!.up();
      }
      const { code } = await terminate(p.api!);
      expect(code).not.toBeNull();
      expect(p.api!.output.join('')).toMatch(/Shutdown (complete|done)/);
    },
  );

  it('a worker with a reply in hand exits on SIGTERM within its grace period and close deadline', async () => {
    const p = await start(1);
    await openStream(p);
    await redis!.down();
    const { code } = await terminate(p.workers[0]!);
    expect(code).not.toBeNull();
  });
});
