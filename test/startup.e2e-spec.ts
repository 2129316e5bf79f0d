import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './support/free-port.js';
import { MODELS_DIR } from './support/platform.js';

const ROOT = resolve(import.meta.dirname, '..');

function collect(proc: ReturnType<typeof spawn>): { text: () => string } {
  let out = '';
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  return { text: () => out };
}

async function until(check: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting; output so far:\n${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function answers(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

describe('start-up', () => {
  it.each([
    ['api', 'dist/apps/api/src/main.js'],
    ['worker', 'dist/apps/worker/src/main.js'],
  ])('the %s refuses a bad configuration with one message naming each variable', async (_name, script) => {
    const proc = spawn(process.execPath, [resolve(ROOT, script)], {
      cwd: ROOT,
      env: { ...process.env, PORT: 'eighty', THREADS: '0', REDIS_URL: 'http://nope' },
    });
    const out = collect(proc);
    const code = await new Promise<number | null>((r) => proc.on('exit', r));
    expect(code).toBe(1);
    expect(out.text()).toMatch(/Invalid configuration/);
    for (const name of ['PORT', 'THREADS', 'REDIS_URL']) expect(out.text()).toContain(name);
    expect(out.text()).not.toMatch(/at .*\.js:\d+/);
  });

  it('the launcher behind `npm start` starts a private Redis, the worker and the API, and Ctrl-C stops them all', async () => {
    const [port, redisPort] = await Promise.all([freePort(), freePort()]);
    const redisUrl = `redis://127.0.0.1:${redisPort}`;
    const proc = spawn(process.execPath, [resolve(ROOT, 'scripts/start.mjs')], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', PORT: String(port), REDIS_URL: redisUrl, MODELS_DIR, PARALLEL: '1' },
    });
    const out = collect(proc);
    try {
      await until(() => /listening on/.test(out.text()) && /Worker ready/.test(out.text()), 30_000, out.text);
      expect(out.text()).toMatch(/started a private redis-server/);
      expect(out.text()).toMatch(/RANDOM-WEIGHT model/);

      const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'conveyor-tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 }),
      });
      expect(res.status).toBe(200);
      expect((await res.json()).usage.completion_tokens).toBe(3);

      proc.kill('SIGINT');
      const code = await new Promise<number | null>((r) => proc.on('exit', r));
      expect(code).toBe(0);
      expect(await answers(redisUrl)).toBe(false);
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
  });
});
