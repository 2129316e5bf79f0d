import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { spawnOwned, stopOwned } from './support/owned-processes.mjs';
import { alive } from './support/alive.js';
import { EVENTUALLY_MS } from './support/jobs.js';

const SUPPORT = resolve(import.meta.dirname, 'support/owned-processes.mjs');

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** Lines a process printed, as they come. */
function lines(proc: ReturnType<typeof spawn>): string[] {
  const out: string[] = [];
  proc.stdout?.on('data', (c: Buffer) => out.push(...c.toString().split('\n').filter(Boolean)));
  return out;
}

describe('processes the tests start', () => {
  it('are stopped with their whole process group', async () => {
    const shell = spawnOwned('sh', ['-c', 'sleep 60 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const out = lines(shell);
    expect(await until(() => out.length > 0, EVENTUALLY_MS)).toBe(true);
    const grandchild = Number(out[0]);
    expect(alive(grandchild)).toBe(true);
    await stopOwned(shell, 2000);
    expect(await until(() => !alive(grandchild), EVENTUALLY_MS)).toBe(true);
  });

  it('die with the process that started them, however it ends (a jest worker killed mid-test)', async () => {
    // Stands in for a jest worker: starts a long-running process through spawnOwned, then is SIGKILLed.
    const script = `import { spawnOwned } from ${JSON.stringify(SUPPORT)};
      const child = spawnOwned('sleep', ['60'], { stdio: 'ignore' });
      console.log(child.pid);
      setInterval(() => {}, 1000);`;
    const runner = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const out = lines(runner);
    expect(await until(() => out.length > 0, EVENTUALLY_MS)).toBe(true);
    const orphan = Number(out[0]);
    expect(alive(orphan)).toBe(true);
    runner.kill('SIGKILL');
    expect(await until(() => !alive(orphan), EVENTUALLY_MS)).toBe(true);
  });
});
