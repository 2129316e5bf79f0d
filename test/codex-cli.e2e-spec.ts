import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentBin, runAgentCli } from './support/agent-cli.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { TestPlatform } from './support/platform.js';

const MODEL = 'conveyor-tiny';
const TEXT = 'Hi from the queue.';

/**
 * Codex CLI, as installed, run once against the platform with its default features: its requests
 * carry a namespace, a free-form tool and a hosted web search, developer messages, `store: false`
 * with encrypted reasoning included, and its whole system prompt (some 40 kB). The deployment is a
 * simulated one, which answers at once and always finishes its reply, so the test checks the
 * protocol, not a model: a random-weight model would need a 64k context for that prompt and minutes
 * to read it.
 */
describe('Codex CLI against the Responses API', () => {
  let platform: TestPlatform;
  let home: string;

  beforeAll(async () => {
    const config = writeDeploymentsFile({
      deployments: [
        {
          id: MODEL,
          engine: 'simulated',
          simulated: { ttftMs: 10, tpotMs: 1, outputTokens: 4, text: TEXT },
          parallel: 2,
          contextSize: 65536,
        },
      ],
    });
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config, LOG_LEVEL: 'debug' } });
    home = mkdtempSync(join(tmpdir(), 'conveyor-codex-home-'));
    writeFileSync(
      join(home, 'config.toml'),
      [
        `model = "${MODEL}"`,
        'model_provider = "conveyor"',
        '[model_providers.conveyor]',
        'name = "Conveyor"',
        `base_url = "${platform.baseUrl}/v1"`,
        'wire_api = "responses"',
        'env_key = "CONVEYOR_API_KEY"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        '',
      ].join('\n'),
    );
  }, 60_000);

  afterAll(async () => {
    await platform?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('completes a turn of `codex exec`, first try', async () => {
    const run = await runAgentCli(
      agentBin('codex'),
      ['exec', '--skip-git-repo-check', 'say hi'],
      { CODEX_HOME: home, CONVEYOR_API_KEY: 'unused', NO_COLOR: '1' },
      90_000,
    );
    const out = run.stdout + run.stderr;
    if (run.code !== 0) throw new Error(`codex exec exited with ${run.code}:\n${out}`);
    // The reply reached Codex: the simulated text is its last message.
    expect(out).toContain(TEXT.split(' ')[0]);
    expect(out).not.toMatch(/ERROR/);
  }, 120_000);
});
