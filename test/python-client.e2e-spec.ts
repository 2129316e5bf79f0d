import { resolve } from 'node:path';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { TestPlatform } from './support/platform.js';
import { itPassesEveryCheck, pythonWithOpenAi, runCheckScript, type CheckRun } from './support/python.js';

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
  'responses.create',
  'responses.stream',
  'responses.retrieve',
  'responses.previous_response_id',
  'responses.tools',
  'responses.structured_output',
  'responses.background',
  'responses.delete',
];

const python = pythonWithOpenAi();
const describeWithPython = python ? describe : describe.skip;

describeWithPython('the official Python openai client against the platform', () => {
  let platform: TestPlatform;
  let run: CheckRun;

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
  }, 180_000);

  afterAll(async () => {
    await platform?.stop();
  });

  itPassesEveryCheck('The Python client check', CHECKS, () => run);
});
