import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { spawnOwned } from './owned-processes.mjs';
import { redisAnswers } from '../../scripts/redis-answers.mjs';

/** A redis-server of the test's own, with AOF on a private folder, that the test may stop and restart. */
export class PrivateRedis {
  private proc: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort(), mkdtempSync(join(tmpdir(), 'conveyor-redis-')));
    await redis.up();
    return redis;
  }

  async up(): Promise<void> {
    this.proc = spawnOwned(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
        '--maxmemory-policy',
        'noeviction',
      ],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 100; i++) {
      if (await redisAnswers(this.url)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('private redis-server did not start');
  }

  /** SHUTDOWN: Redis syncs its AOF and exits, as in a restart. */
  async down(): Promise<void> {
    const client = new Redis(this.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    await client.call('SHUTDOWN').catch(() => undefined);
    client.disconnect();
    if (this.proc && this.proc.exitCode === null) await new Promise((r) => this.proc!.once('exit', r));
  }

  async stop(): Promise<void> {
    if (this.proc && this.proc.exitCode === null) {
      this.proc.kill('SIGKILL');
      await new Promise((r) => this.proc!.once('exit', r));
    }
  }
}
