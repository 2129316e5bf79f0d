import type { ChildProcess } from 'node:child_process';
import { spawnOwned, stopOwned } from './support/owned-processes.mjs';
import { createServer } from 'node:net';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ChatCompletion } from '@conveyor/openai';
import { freePort } from './support/free-port.js';
import { redisAnswers } from '../scripts/redis-answers.mjs';
import { readJson } from './support/json.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { exited, MODELS_DIR, REDIS_URL, TestPlatform } from './support/platform.js';

const ROOT = resolve(import.meta.dirname, '..');

function collect(proc: ChildProcess): { text: () => string } {
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

describe('start-up', () => {
  it.each([
    ['api', 'dist/apps/api/src/main.js'],
    ['worker', 'dist/apps/worker/src/main.js'],
  ])('the %s refuses a bad configuration with one message naming each variable', async (_name, script) => {
    const proc = spawnOwned(process.execPath, [resolve(ROOT, script)], {
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

  it('an API whose port is taken says so in one line, naming PORT, and exits 1', async () => {
    const taken = createServer();
    const port = await freePort();
    await new Promise<void>((ok) => taken.listen(port, '127.0.0.1', ok));
    try {
      const proc = spawnOwned(process.execPath, [resolve(ROOT, 'dist/apps/api/src/main.js')], {
        cwd: ROOT,
        env: {
          ...process.env,
          NO_COLOR: '1',
          PORT: String(port),
          HOST: '127.0.0.1',
          MODEL: 'tiny',
          MODELS_DIR,
          REDIS_URL,
        },
      });
      const out = collect(proc);
      expect(await new Promise((r) => proc.on('exit', r))).toBe(1);
      expect(out.text()).toContain(`Port ${port} is already in use on 127.0.0.1`);
      expect(out.text()).toContain('PORT=<port>');
      expect(out.text()).not.toMatch(/EADDRINUSE|setupListenHandle|at .*\.js:\d+/);
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });

  const runWorker = (env: Record<string, string>, args: string[] = []) => {
    const proc = spawnOwned(process.execPath, [resolve(ROOT, 'dist/apps/worker/src/main.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', MODELS_DIR, REDIS_URL, REDIS_PREFIX: `startup-${process.pid}`, ...env },
    });
    return { proc, out: collect(proc) };
  };

  it('refuses a deployments file with a bad field, naming the field', async () => {
    const file = writeDeploymentsFile({ deployments: [{ id: 'ok', model: 'tiny', pool: 'tpu' }] });
    const { proc, out } = runWorker({ CONVEYOR_CONFIG: file });
    expect(await new Promise((r) => proc.on('exit', r))).toBe(1);
    expect(out.text()).toContain('deployments[0].pool must be one of the following values: cpu, gpu');
  });

  it('a gpu-pool worker refuses to start on a machine without a usable GPU, unless CPU fallback is allowed', async () => {
    const file = writeDeploymentsFile({ deployments: [{ id: 'big', model: 'tiny', pool: 'gpu', parallel: 1 }] });
    const refused = runWorker({ CONVEYOR_CONFIG: file }, ['--pool', 'gpu']);
    expect(await new Promise((r) => refused.proc.on('exit', r))).toBe(1);
    expect(refused.out.text()).toMatch(/serves the gpu pool, but no usable GPU .* ALLOW_CPU_FALLBACK=1/);

    const fallback = runWorker({ CONVEYOR_CONFIG: file, ALLOW_CPU_FALLBACK: '1' }, ['--pool', 'gpu']);
    try {
      await until(() => /Worker ready/.test(fallback.out.text()), 30_000, fallback.out.text);
      expect(fallback.out.text()).toMatch(/\\?"big\\?" \(gpu pool\)/);
    } finally {
      fallback.proc.kill('SIGTERM');
      await new Promise((r) => fallback.proc.on('exit', r));
    }
  });

  it('a cpu worker with nothing in its pool says so and exits', async () => {
    const file = writeDeploymentsFile({ deployments: [{ id: 'big', model: 'tiny', pool: 'gpu' }] });
    const { proc, out } = runWorker({ CONVEYOR_CONFIG: file });
    expect(await new Promise((r) => proc.on('exit', r))).toBe(1);
    expect(out.text()).toContain('No deployment is in the cpu pool');
  });

  it('the launcher behind `npm start` starts a private Redis, the worker and the API, and Ctrl-C stops them all', async () => {
    const [port, redisPort] = await Promise.all([freePort(), freePort()]);
    const redisUrl = `redis://127.0.0.1:${redisPort}`;
    const proc = spawnOwned(process.execPath, [resolve(ROOT, 'scripts/start.mjs')], {
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
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'conveyor-tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 }),
      });
      expect(res.status).toBe(200);
      expect((await readJson<ChatCompletion>(res)).usage.completion_tokens).toBe(3);

      proc.kill('SIGINT');
      const code = await new Promise<number | null>((r) => proc.on('exit', r));
      expect(code).toBe(0);
      expect(await redisAnswers(redisUrl)).toBe(false);
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
  });
});

describe('start-up beside other API replicas', () => {
  const dirs = [`/tmp/conveyor-test-store-a-${process.pid}`, `/tmp/conveyor-test-store-b-${process.pid}`];
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await TestPlatform.start({ workers: 0, env: { DATA_DIR: dirs[0]! } });
  });

  afterAll(async () => {
    await platform?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('an API whose file store is not the one its peers on the Redis prefix share refuses to start, saying why', async () => {
    const proc = spawnOwned(process.execPath, [resolve(ROOT, 'dist/apps/api/src/main.js')], {
      cwd: ROOT,
      env: { ...process.env, ...platform.env, PORT: String(await freePort()), DATA_DIR: dirs[1]! },
    });
    const out = collect(proc);
    const code = await new Promise<number | null>((r) => proc.on('exit', r));
    expect(code).toBe(1);
    expect(out.text()).toMatch(/Another file store is in use by API replicas running now on the Redis prefix/);
    expect(out.text()).toMatch(/Point this replica at the same file store, give this stack its own REDIS_PREFIX/);
    // One sharing the store starts as usual.
    const peer = await platform.startExtraApi({ DATA_DIR: dirs[0]! });
    expect((await fetch(`${peer.baseUrl}/health`)).status).toBe(200);
  });
});

describe('start-up after the replicas of another file store are gone', () => {
  const dirs = [`/tmp/conveyor-test-gone-a-${process.pid}`, `/tmp/conveyor-test-gone-b-${process.pid}`];
  let platform: TestPlatform | undefined;

  afterEach(async () => {
    await platform?.stop();
    platform = undefined;
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  // A stack started again after its data folder was deleted, or a second clone on the same Redis.
  // A stopped replica gives its hold back, so the next starts without waiting out STORE_HOLD_MS (15 s);
  // a crashed one's hold lapses first. The bounds say which happened, with room for a slow machine.
  it.each([
    ['stopped', 14_000],
    ['crashed', 15_000 + 30_000],
  ] as const)('an API with another store starts once the replicas of the old one have %s', async (how, withinMs) => {
    platform = await TestPlatform.start({ workers: 0, env: { DATA_DIR: dirs[0]! } });
    const old = platform.api!;
    if (how === 'stopped') await stopOwned(old.proc);
    else {
      old.proc.kill('SIGKILL');
      await exited(old);
    }
    const started = Date.now();
    const next = await platform.startExtraApi({ DATA_DIR: dirs[1]! });
    expect(Date.now() - started).toBeLessThan(withinMs);
    expect((await fetch(`${next.baseUrl}/health`)).status).toBe(200);
  });
});
