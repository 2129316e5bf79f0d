import { resolve } from 'node:path';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { TestPlatform } from './support/platform.js';
import { pythonWithOpenAi, runCheckScript, type CheckLine, type CheckRun } from './support/python.js';

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

const python = pythonWithOpenAi();
const describeWithPython = python ? describe : describe.skip;

describeWithPython('the official Python openai client against the platform', () => {
  let platform: TestPlatform;
  let run: CheckRun;
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
    run = await runCheckScript(
      python!,
      SCRIPT,
      {
        CONVEYOR_BASE_URL: `${platform.baseUrl}/v1`,
        CONVEYOR_CHAT_MODEL: CHAT,
        CONVEYOR_EMBEDDINGS_MODEL: EMBED,
        OPENAI_API_KEY: 'unused',
      },
      150_000,
    );
    lines = run.lines;
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
