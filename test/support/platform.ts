import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { spawnOwned, stopOwned } from './owned-processes.mjs';

const ROOT = resolve(import.meta.dirname, '../..');
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const MODELS_DIR = resolve(ROOT, 'models');

export interface ManagedProcess {
  proc: ChildProcess;
  output: string[];
}

function launch(
  script: string,
  env: Record<string, string>,
  readyLine: RegExp,
  args: string[] = [],
  timeoutMs = 30_000,
): Promise<ManagedProcess> {
  const proc = spawnOwned(process.execPath, [resolve(ROOT, script), ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  return new Promise((ok, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`${script} not ready in ${timeoutMs} ms:\n${output.join('')}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      if (readyLine.test(chunk.toString())) {
        clearTimeout(timer);
        ok({ proc, output });
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onData);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`${script} exited with ${code}:\n${output.join('')}`));
    });
  });
}

export function exited(p: ManagedProcess): Promise<number | null> {
  if (p.proc.exitCode !== null || p.proc.signalCode !== null) return Promise.resolve(p.proc.exitCode);
  return new Promise((r) => p.proc.once('exit', (code) => r(code)));
}

/**
 * A real API and real workers as separate processes on a fresh Redis key
 * prefix, with the tiny generated model. Everything is stopped and the
 * prefix's keys deleted by `stop`.
 */
export class TestPlatform {
  readonly workers: ManagedProcess[] = [];
  readonly extraApis: ManagedProcess[] = [];
  api: ManagedProcess | null = null;

  private constructor(
    readonly port: number,
    readonly prefix: string,
    readonly env: Record<string, string>,
  ) {}

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static async start(options: { workers?: number; env?: Record<string, string> } = {}): Promise<TestPlatform> {
    const port = await freePort();
    const prefix = `test-${randomBytes(6).toString('hex')}`;
    const platform = new TestPlatform(port, prefix, {
      PORT: String(port),
      HOST: '127.0.0.1',
      REDIS_URL,
      REDIS_PREFIX: prefix,
      MODELS_DIR,
      // A deployments file declares its own models; MODEL is the one-deployment shortcut.
      ...(options.env?.CONVEYOR_CONFIG ? {} : { MODEL: 'tiny' }),
      PARALLEL: '2',
      ...options.env,
    });
    try {
      await Promise.all([
        platform.startApi(),
        ...Array.from({ length: options.workers ?? 1 }, () => platform.startWorker()),
      ]);
    } catch (err) {
      await platform.stop();
      throw err;
    }
    return platform;
  }

  async startApi(): Promise<ManagedProcess> {
    this.api = await launch('dist/apps/api/src/main.js', this.env, /listening on/);
    return this.api;
  }

  /** Another API replica on its own port, with the same settings (same Redis prefix, same store). */
  async startExtraApi(env: Record<string, string> = {}): Promise<{ api: ManagedProcess; baseUrl: string }> {
    const port = await freePort();
    const api = await launch('dist/apps/api/src/main.js', { ...this.env, ...env, PORT: String(port) }, /listening on/);
    this.extraApis.push(api);
    return { api, baseUrl: `http://127.0.0.1:${port}` };
  }

  async startWorker(env: Record<string, string> = {}, args: string[] = []): Promise<ManagedProcess> {
    // As the launchers start a worker (npm run start:worker, the worker images).
    const worker = await launch(
      'dist/apps/worker/src/main.js',
      { UV_THREADPOOL_SIZE: '1', ...this.env, ...env },
      /Worker ready/,
      args,
    );
    this.workers.push(worker);
    return worker;
  }

  async stop(): Promise<void> {
    const all = [this.api, ...this.extraApis, ...this.workers].filter((p): p is ManagedProcess => p !== null);
    await Promise.all(all.map((p) => stopOwned(p.proc)));
    await deleteKeys(this.prefix);
  }
}

export async function deleteKeys(prefix: string, url = REDIS_URL): Promise<void> {
  const redis = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
