import { join, resolve } from 'node:path';
import type { ApiKeyObject } from '@conveyor/openai';
import { spawnOwned } from './support/owned-processes.mjs';
import { TestPlatform } from './support/platform.js';

const ROOT = resolve(import.meta.dirname, '..');
const MODEL = 'conveyor-tiny';
const ADMIN_KEY = 'admin-key-for-the-keys-cli';
const WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A stack frame line, as Node prints one under an uncaught error. */
const STACK_FRAME = /^\s+at /m;

describe('the keys command-line client (scripts/keys.mjs)', () => {
  let platform: TestPlatform;

  /** Runs the client as `npm run keys` does, as its own process, against the test platform unless `env` says otherwise. */
  const runCli = (args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> => {
    const cli = spawnOwned(process.execPath, [join(ROOT, 'scripts/keys.mjs'), ...args], {
      cwd: ROOT,
      env: { ...process.env, CONVEYOR_URL: platform.baseUrl, ADMIN_KEY, ...env },
    });
    let stdout = '';
    let stderr = '';
    cli.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    cli.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    return new Promise((ok) => cli.on('close', (code) => ok({ code, stdout, stderr })));
  };

  const chat = async (key: string): Promise<number> => {
    const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 4 }),
    });
    await res.arrayBuffer();
    return res.status;
  };

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { ADMIN_KEY } });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('creates a key with every setting, prints it alone on stdout, and the key serves a chat request', async () => {
    const run = await runCli([
      'create',
      '--name',
      'cli-team',
      '--rpm',
      '7',
      '--tpm',
      '2000',
      '--tpd',
      '50000',
      '--tiers',
      'default,flex',
      '--weight',
      '1.5',
      '--deadline-ms',
      '60000',
      '--webhook-url',
      'http://127.0.0.1:9/hook',
      '--webhook-secret',
      WEBHOOK_SECRET,
    ]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^Created the key cli-team \(sk-conveyor-\.\.\.\S{4}\); it is shown this once:$/m);
    const key = run.stdout.trim();
    expect(key).toMatch(/^sk-conveyor-\S+$/);
    expect(await chat(key)).toBe(200);

    const list = await runCli(['list', '--json']);
    expect(list.code).toBe(0);
    const keys = JSON.parse(list.stdout) as ApiKeyObject[];
    expect(keys).toEqual([
      expect.objectContaining({
        name: 'cli-team',
        source: 'runtime',
        rateLimit: { requests: 7, perSeconds: 60 },
        tokenLimit: { perMinute: 2000, perDay: 50000 },
        tiers: ['default', 'flex'],
        weight: 1.5,
        deadlineMs: 60000,
        webhook: { url: 'http://127.0.0.1:9/hook' },
      }),
    ]);
    const table = await runCli(['list']);
    expect(table.stdout).toMatch(/^NAME\s+SOURCE\s+KEY/);
    expect(table.stdout).toMatch(
      /^cli-team\s+runtime\s+sk-conveyor-\.\.\.\S{4}\s.*7\/60s\s+2000\s+50000\s+default,flex\s+1\.5\s+60000/m,
    );
    expect(table.stdout + list.stdout).not.toContain(key);
  });

  it('rotates a key (the old one refused, the new one works) and revokes it', async () => {
    const made = await runCli(['create', '--name', 'cli-rotated']);
    const old = made.stdout.trim();
    const rotated = await runCli(['rotate', 'cli-rotated']);
    expect(rotated.code).toBe(0);
    const fresh = rotated.stdout.trim();
    expect(fresh).toMatch(/^sk-conveyor-\S+$/);
    expect(fresh).not.toBe(old);
    expect(await chat(old)).toBe(401);
    expect(await chat(fresh)).toBe(200);

    const revoked = await runCli(['revoke', 'cli-rotated']);
    expect(revoked).toMatchObject({ code: 0, stdout: '' });
    expect(revoked.stderr).toBe('Revoked the key cli-rotated.\n');
    expect(await chat(fresh)).toBe(401);
  });

  it("says in one line what went wrong: the server's refusal, a missing admin key, a wrong command line, no server", async () => {
    const taken = await runCli(['create', '--name', 'cli-team']);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/failed with 409: An API key named 'cli-team' exists, or existed/);

    const badValue = await runCli(['create', '--name', 'x', '--tiers', 'gold']);
    expect(badValue.code).toBe(1);
    expect(badValue.stderr).toMatch(/failed with 400: tiers/);

    const wrongAdmin = await runCli(['list'], { ADMIN_KEY: 'not-the-admin-key' });
    expect(wrongAdmin.code).toBe(1);
    expect(wrongAdmin.stderr).toMatch(/failed with 401/);

    const noAdmin = await runCli(['list'], { ADMIN_KEY: undefined });
    expect(noAdmin.code).toBe(2);
    expect(noAdmin.stderr).toMatch(/Set ADMIN_KEY/);

    for (const args of [['create'], ['create', '--name', 'x', '--rpm', 'many'], ['rotate'], ['fly']]) {
      const run = await runCli(args);
      expect(run.code).toBe(2);
    }

    const noServer = await runCli(['list'], { CONVEYOR_URL: 'http://127.0.0.1:1' });
    expect(noServer.code).toBe(1);
    expect(noServer.stderr).toMatch(/Cannot reach the API at http:\/\/127\.0\.0\.1:1/);

    for (const run of [taken, badValue, wrongAdmin, noAdmin, noServer]) expect(run.stderr).not.toMatch(STACK_FRAME);
  });
});
