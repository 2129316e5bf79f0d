import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { TestPlatform } from './support/platform.js';
import { pythonWithOpenAi } from './support/python.js';

const CHAT = 'conveyor-tiny';
const EMBED = 'conveyor-embed';
const SCRIPT = resolve(import.meta.dirname, 'python/openai_client_check.py');
/** Every check the script makes, in the order it prints them. */
const CHECKS = [
  'models.list',
  'models.retrieve',
  'chat.sync',
  'chat.stream',
  'chat.tools',
  'chat.structured_output',
  'files.upload',
  'files.list',
  'files.retrieve',
  'files.content',
  'batches.create',
  'batches.retrieve',
  'batches.list',
  'batches.cancel',
  'batches.completed',
  'files.delete',
  'embeddings',
];

interface CheckLine {
  check: string;
  ok: boolean;
  detail: unknown;
}

const isCheckLine = (v: unknown): v is CheckLine =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Partial<CheckLine>).check === 'string' &&
  typeof (v as Partial<CheckLine>).ok === 'boolean';

const parseLine = (line: string): CheckLine | null => {
  try {
    const value: unknown = JSON.parse(line);
    return isCheckLine(value) ? value : null;
  } catch {
    return null;
  }
};

/** Runs the script to its end; it reports every check whatever fails, so nothing here stops it early. */
function runScript(
  python: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((ok, fail) => {
    const proc = spawn(python, [SCRIPT], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.on('error', fail);
    proc.on('close', (code) => {
      clearTimeout(timer);
      ok({ code, stdout, stderr });
    });
  });
}

const python = pythonWithOpenAi();
const describeWithPython = python ? describe : describe.skip;

describeWithPython('the official Python openai client against the platform', () => {
  let platform: TestPlatform;
  let run: { code: number | null; stdout: string; stderr: string };
  let lines: CheckLine[];

  beforeAll(async () => {
    const config = writeDeploymentsFile({
      deployments: [
        { id: CHAT, model: 'tiny', contextSize: 2048, parallel: 2, threads: 1 },
        { id: EMBED, model: 'tiny', task: 'embeddings', contextSize: 512, parallel: 2, threads: 1 },
      ],
    });
    // One worker serves every deployment on the CPU pool: the chat and the embeddings one.
    platform = await TestPlatform.start({
      env: { CONVEYOR_CONFIG: config, DATA_DIR: `/tmp/conveyor-test-data-${process.pid}-python` },
    });
    run = await runScript(
      python!,
      {
        CONVEYOR_BASE_URL: `${platform.baseUrl}/v1`,
        CONVEYOR_CHAT_MODEL: CHAT,
        CONVEYOR_EMBEDDINGS_MODEL: EMBED,
        OPENAI_API_KEY: 'unused',
      },
      150_000,
    );
    lines = run.stdout
      .split('\n')
      .map(parseLine)
      .filter((l): l is CheckLine => l !== null);
  }, 180_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('runs every check once, in order, and exits 0', () => {
    if (run.stderr) console.warn(`The Python client check wrote to stderr:\n${run.stderr}`);
    expect({ checks: lines.map((l) => l.check), code: run.code }).toEqual({ checks: CHECKS, code: 0 });
  });

  it.each(CHECKS)('passes %s', (name) => {
    const line = lines.find((l) => l.check === name);
    if (!line) throw new Error(`No line for ${name}; the script exited ${run.code}:\n${run.stdout}${run.stderr}`);
    // On failure the diff shows the script's detail: the exception and the line it came from.
    expect(line).toEqual({ check: name, ok: true, detail: line.detail });
  });
});
