import { spawnOwned } from './support/owned-processes.mjs';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import OpenAI from 'openai';
import { chatLine, jsonl } from './support/batches.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { freePort } from './support/free-port.js';
import { TestPlatform } from './support/platform.js';

const ROOT = resolve(import.meta.dirname, '..');
const CHAT = 'conveyor-tiny';
const EMBED = 'conveyor-embed';
/** The tiny preset's embedding width. */
const WIDTH = 128;
const API_KEY = 'sk-batch-cli-0123456789';
const DATA_DIR = `/tmp/conveyor-test-batch-cli-${process.pid}`;

const config = writeDeploymentsFile({
  deployments: [
    { id: CHAT, model: 'tiny', contextSize: 512, parallel: 2, threads: 1 },
    { id: EMBED, model: 'tiny', task: 'embeddings', contextSize: 512, parallel: 2, threads: 1 },
  ],
});

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A line of a batch's output or error file. */
interface ResultLine {
  custom_id: string;
  response: { status_code: number; body: unknown } | null;
  error: { code: string; message: string } | null;
}

interface EmbeddingList {
  object: 'list';
  data: { index: number; embedding: number[] }[];
}

const readResults = (path: string): ResultLine[] =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ResultLine);

/** A stack frame line, as Node prints one under an uncaught error. */
const STACK_FRAME = /^\s+at /m;

describe('the batch command-line client (scripts/batch.mjs)', () => {
  let platform: TestPlatform;
  let client: OpenAI;
  const temporary: string[] = [];

  /** A fresh folder under the system's temporary one, removed after the tests. */
  const folder = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'conveyor-cli-'));
    temporary.push(dir);
    return dir;
  };

  /**
   * Runs the client as `npm run batch` does: from the repository root unless `cwd` says otherwise,
   * with INIT_CWD (the folder npm was started from) only when `initCwd` is given. `interruptWhen`:
   * press Ctrl-C (SIGINT) once what it printed on stderr matches.
   */
  const runCli = (
    args: string[],
    options: { cwd?: string; initCwd?: string; interruptWhen?: RegExp } = {},
  ): Promise<CliRun> => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.INIT_CWD;
    if (options.initCwd) env.INIT_CWD = options.initCwd;
    const cli = spawnOwned(process.execPath, [join(ROOT, 'scripts/batch.mjs'), ...args], {
      cwd: options.cwd ?? ROOT,
      env,
    });
    let stdout = '';
    let stderr = '';
    cli.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    let interrupted = false;
    cli.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
      if (!interrupted && options.interruptWhen?.test(stderr)) interrupted = cli.kill('SIGINT');
    });
    return new Promise((ok) => cli.on('close', (code) => ok({ code, stdout, stderr })));
  };

  /** The options every run against the test platform takes. */
  const server = (): string[] => ['--base-url', `${platform.baseUrl}/v1`, '--api-key', API_KEY, '--interval', '100'];

  const completionLine = (id: string): string =>
    JSON.stringify({
      custom_id: id,
      method: 'POST',
      url: '/v1/completions',
      body: { model: CHAT, prompt: `Line ${id}`, max_tokens: 3, temperature: 0, ignore_eos: true },
    });

  const embeddingLine = (id: string, input: string | string[]): string =>
    JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/embeddings', body: { model: EMBED, input } });

  const uploads = async (): Promise<number> => (await client.files.list()).data.length;

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config, API_KEYS: API_KEY, DATA_DIR } });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: API_KEY });
  });

  afterAll(async () => {
    await platform?.stop();
    for (const dir of [...temporary, DATA_DIR, dirname(config)]) rmSync(dir, { recursive: true, force: true });
  });

  it('submits a chat batch, reports progress and writes the output file to --out', async () => {
    const dir = folder();
    const input = join(dir, 'requests.jsonl');
    writeFileSync(input, jsonl(Array.from({ length: 5 }, (_, i) => chatLine(`cli-${i}`))));

    const run = await runCli([input, ...server(), '--out', dir]);

    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /^Submitted requests\.jsonl to \/v1\/chat\/completions as batch_\w+ \(file file-\w+\)$/m,
    );
    expect(run.stderr).toMatch(/\[#+\] 5\/5 \(5 ok, 0 failed\) [\d.]+\/s ETA/);
    // What the batch's plan did: five lines with one (empty) shared beginning, none asked twice.
    expect(run.stderr).toMatch(
      /^Plan: 1 group\(s\) of lines sharing a beginning, 0 repeat\(s\) run once; prompt tokens evaluated \d+/m,
    );
    const outputPath = run.stdout.trim().split('\n')[0];
    expect(dirname(outputPath)).toBe(dir);
    expect(run.stderr).toContain(`Wrote ${outputPath.slice(dir.length + 1)} to ${dir}`);
    const lines = readResults(outputPath);
    expect(lines.map((l) => l.custom_id).sort()).toEqual(['cli-0', 'cli-1', 'cli-2', 'cli-3', 'cli-4']);
    for (const line of lines)
      expect(line).toMatchObject({ response: { status_code: 200, body: { object: 'chat.completion' } }, error: null });
  });

  it("takes the endpoint from the file's first request line, and creates a missing --out folder where it was run", async () => {
    const from = folder();
    const input = join(folder(), 'completions.jsonl');
    // A blank line first: the endpoint comes from the first line that holds a request.
    writeFileSync(input, '\n' + ['c-1', 'c-2', 'c-3'].map(completionLine).join('\n') + '\n');

    const run = await runCli([input, ...server(), '--out', 'results/today'], { cwd: folder(), initCwd: from });

    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^Submitted completions\.jsonl to \/v1\/completions as batch_/m);
    const outputPath = run.stdout.trim().split('\n')[0];
    expect(dirname(outputPath)).toBe(join(from, 'results/today'));
    const lines = readResults(outputPath);
    expect(lines.map((l) => l.custom_id).sort()).toEqual(['c-1', 'c-2', 'c-3']);
    for (const line of lines)
      expect(line.response).toMatchObject({
        status_code: 200,
        body: { object: 'text_completion', model: CHAT, usage: { completion_tokens: 3 } },
      });
  });

  it('takes the endpoint from a first line behind a UTF-8 byte-order mark, and the server runs that line', async () => {
    const dir = folder();
    const input = join(dir, 'saved-on-windows.jsonl');
    writeFileSync(input, '\uFEFF' + ['b-1', 'b-2'].map(completionLine).join('\r\n') + '\r\n');

    const run = await runCli([input, ...server(), '--out', dir]);

    expect(run.stderr).toMatch(/^Submitted saved-on-windows\.jsonl to \/v1\/completions as batch_/m);
    expect(run.code).toBe(0);
    const lines = readResults(run.stdout.trim().split('\n')[0]);
    expect(lines.map((l) => l.custom_id).sort()).toEqual(['b-1', 'b-2']);
    for (const line of lines) expect(line.response).toMatchObject({ status_code: 200 });
  });

  it('runs an embeddings batch named with --endpoint', async () => {
    const dir = folder();
    const input = join(dir, 'vectors.jsonl');
    writeFileSync(input, [embeddingLine('one', 'alpha'), embeddingLine('two', ['alpha', 'beta'])].join('\n') + '\n');

    const run = await runCli([input, '--endpoint', '/v1/embeddings', ...server(), '--out', dir]);

    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^Submitted vectors\.jsonl to \/v1\/embeddings as batch_/m);
    const lines = new Map(readResults(run.stdout.trim().split('\n')[0]).map((l) => [l.custom_id, l]));
    expect([...lines.keys()].sort()).toEqual(['one', 'two']);
    const vectors = (id: string): number[][] => {
      const body = lines.get(id)?.response?.body as EmbeddingList;
      expect(body.object).toBe('list');
      return body.data.map((d) => d.embedding);
    };
    expect(vectors('one').map((v) => v.length)).toEqual([WIDTH]);
    expect(vectors('two').map((v) => v.length)).toEqual([WIDTH, WIDTH]);
    expect(vectors('two')[0]).toEqual(vectors('one')[0]);
  });

  it('reads a relative input path from the folder it was run from, and writes the results there by default', async () => {
    const from = folder();
    writeFileSync(join(from, 'requests.jsonl'), jsonl([chatLine('rel-1'), chatLine('rel-2')]));

    // As `npm run batch` runs it: in the repository root, with INIT_CWD naming the user's folder.
    const run = await runCli(['requests.jsonl', ...server()], { cwd: ROOT, initCwd: from });

    expect(run.code).toBe(0);
    const outputPath = run.stdout.trim().split('\n')[0];
    expect(dirname(outputPath)).toBe(from);
    expect(
      readResults(outputPath)
        .map((l) => l.custom_id)
        .sort(),
    ).toEqual(['rel-1', 'rel-2']);
    expect(run.stderr).toContain(`to ${from}\n`);
    expect(existsSync(join(ROOT, outputPath.slice(from.length + 1)))).toBe(false);
  });

  it('cancels the batch on Ctrl-C, still writes what finished, and exits 1', async () => {
    const dir = folder();
    const input = join(dir, 'long.jsonl');
    const ids = Array.from({ length: 120 }, (_, i) => `long-${i}`);
    writeFileSync(input, jsonl(ids.map((id) => chatLine(id, { max_tokens: 48 }))));

    const run = await runCli([input, ...server(), '--out', dir], { interruptWhen: / [1-9]\d*\/120 \(/ });

    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Cancelling…');
    expect(run.stderr).toMatch(/^Batch cancelled: /m);
    const [outputPath, errorsPath] = run.stdout.trim().split('\n');
    expect([dirname(outputPath), dirname(errorsPath)]).toEqual([dir, dir]);
    const done = readResults(outputPath);
    const cancelled = readResults(errorsPath);
    expect(done.length).toBeGreaterThan(0);
    expect(cancelled.length).toBeGreaterThan(0);
    for (const line of cancelled) expect(line).toMatchObject({ response: null, error: { code: 'batch_cancelled' } });
    expect([...done, ...cancelled].map((l) => l.custom_id).sort()).toEqual([...ids].sort());
  });

  it('names a missing input file in one line and exits 1, without a stack trace or an upload', async () => {
    const from = folder();
    const before = await uploads();

    // Through npm (INIT_CWD names the folder), and started in that folder without npm.
    for (const run of [
      await runCli(['missing.jsonl', ...server()], { initCwd: from }),
      await runCli(['missing.jsonl', ...server()], { cwd: from }),
    ]) {
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(`Cannot read missing.jsonl (${join(from, 'missing.jsonl')}): no such file or folder.\n`);
      expect(run.stderr).not.toMatch(STACK_FRAME);
      expect(run.stdout).toBe('');
    }
    expect(await uploads()).toBe(before);
  });

  it.each([
    ['is not JSON', '{"custom_id": "x",', /^bad\.jsonl line 2 is not valid JSON, .*pass --endpoint\.$/],
    [
      'names no batch endpoint',
      JSON.stringify({ custom_id: 'x', method: 'POST', url: '/v1/moderations', body: {} }),
      /^bad\.jsonl line 2 has "url": "\/v1\/moderations"; a batch runs one of \/v1\/chat\/completions, \/v1\/completions, \/v1\/embeddings, \/v1\/responses: fix the line or pass --endpoint\.$/,
    ],
  ])('refuses a file whose first request line %s, before uploading it', async (_case, first, message) => {
    const dir = folder();
    const input = join(dir, 'bad.jsonl');
    writeFileSync(input, `\n${first}\n${jsonl([chatLine('ok')])}`);
    const before = await uploads();

    const run = await runCli([input, ...server(), '--out', dir]);

    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(await uploads()).toBe(before);
  });

  it("turns the API's refusals into one line naming the step and the server's message", async () => {
    const dir = folder();
    const input = join(dir, 'requests.jsonl');
    writeFileSync(input, jsonl([chatLine('refused')]));

    const wrongKey = await runCli([input, ...server(), '--api-key', 'sk-wrong', '--out', dir]);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toBe(
      'Conveyor refused uploading requests.jsonl: HTTP 401: Incorrect API key provided. ' +
        'Pass the key with --api-key or CONVEYOR_API_KEY.\n',
    );

    const badWindow = await runCli([input, ...server(), '--window', 'soon', '--out', dir]);
    expect(badWindow.code).toBe(1);
    expect(badWindow.stderr).toBe(
      'Conveyor refused creating the batch of requests.jsonl: HTTP 400: completion_window must be a duration such as "24h"\n',
    );
  });

  it('says so in one line when nothing answers at --base-url', async () => {
    const dir = folder();
    const input = join(dir, 'requests.jsonl');
    writeFileSync(input, jsonl([chatLine('nobody')]));
    const port = await freePort();

    const run = await runCli([input, '--base-url', `http://127.0.0.1:${port}/v1`, '--out', dir]);

    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `Cannot reach Conveyor at http://127.0.0.1:${port}/v1 while uploading requests.jsonl: connect ECONNREFUSED 127.0.0.1:${port}.\n`,
    );
  });
});
