import { resolve } from 'node:path';
import { hashKey } from '@conveyor/config';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { TestPlatform } from './support/platform.js';
import { itPassesEveryCheck, pythonWithAnthropic, runCheckScript, type CheckRun } from './support/python.js';

const MODEL = 'conveyor-tiny';
const KEY = 'sk-python-anthropic-0123456789';
const SCRIPT = resolve(import.meta.dirname, 'python/anthropic_client_check.py');
/** Every check the script makes, in the order it prints them. */
const CHECKS = [
  'messages.create',
  'messages.stream',
  'messages.stop_sequences',
  'messages.count_tokens',
  'messages.tools',
  'messages.batches',
  'messages.errors',
];

const python = pythonWithAnthropic();
const describeWithPython = python ? describe : describe.skip;

describeWithPython(
  "the official Python anthropic client against the platform's Messages and Message Batches APIs",
  () => {
    let platform: TestPlatform;
    let run: CheckRun;

    beforeAll(async () => {
      const config = writeDeploymentsFile({
        deployments: [{ id: MODEL, model: 'tiny', contextSize: 2048, parallel: 2, threads: 1 }],
        apiKeys: [{ name: 'main', sha256: hashKey(KEY) }],
      });
      platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config } });
      run = await runCheckScript(
        python!,
        SCRIPT,
        { CONVEYOR_BASE_URL: platform.baseUrl, CONVEYOR_CHAT_MODEL: MODEL, ANTHROPIC_API_KEY: KEY },
        120_000,
      );
    }, 180_000);

    afterAll(async () => {
      await platform?.stop();
    });

    itPassesEveryCheck('anthropic_client_check.py', CHECKS, () => run);
  },
);
