import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './support/free-port.js';
import { spawnOwned } from './support/owned-processes.mjs';

const ROOT = resolve(import.meta.dirname, '..');

interface Figures {
  chat: Array<Record<string, number | Record<string, number>>>;
  perCore: Record<string, number>;
  workerTokensPerSecond: number;
  batches: Array<{ workers: number; ms: number; completed: number; failed: number; speedup: number; tokens: number }>;
}

/** A finite number above zero. */
const sane = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value > 0;

// The capacity bench's short form, as CI runs it: every figure it prints is there, finite and non-zero.
// Its values depend on the machine and what else runs on it, so they are the bench's to print, not asserted.
describe('the capacity bench, short form', () => {
  it('measures Redis and the API per unit of work, and the batch on 1, 2 and 4 workers', async () => {
    const json = join(mkdtempSync(join(tmpdir(), 'conveyor-capacity-')), 'figures.json');
    const port = await freePort();
    const bench = spawnOwned(
      process.execPath,
      ['bench/capacity.bench.mjs', '--short', '--redis-port', String(port), '--json', json],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    bench.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    bench.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((done) => bench.on('exit', done));
    if (code !== 0) throw new Error(`the bench exited with ${code}:\n${output.slice(-4000)}`);

    const figures = JSON.parse(readFileSync(json, 'utf8')) as Figures;
    expect(figures.chat.map((c) => c.apis)).toEqual([1, 2]);
    for (const run of figures.chat) {
      for (const key of [
        'tokensPerSecond',
        'requestsPerSecond',
        'redisCpuMsPer1kTokens',
        'redisCpuMsPerRequest',
        'apiCpuMsPer1kTokens',
        'apiCpuMsPerRequest',
        'redisCommandsPerToken',
        'redisCommandsPerRequest',
        'redisBytesPerInFlightReply',
        'redisBytesPerFinishedReply',
      ])
        expect([key, sane(run[key])]).toEqual([key, true]);
      expect(run.errors).toBe(0);
    }
    for (const [key, value] of Object.entries(figures.perCore)) expect([key, sane(value)]).toEqual([key, true]);
    expect(figures.batches.map((b) => b.workers)).toEqual([1, 2, 4]);
    for (const batch of figures.batches) {
      expect(batch.failed).toBe(0);
      expect(batch.completed).toBe(figures.batches[0]!.completed);
      expect(sane(batch.ms) && sane(batch.speedup) && sane(batch.tokens)).toBe(true);
    }
    expect(output).toMatch(/What one core carries/);
  }, 600_000);
});
