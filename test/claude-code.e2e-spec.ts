import { agentBin, runAgentCli } from './support/agent-cli.js';
import type { ProcessRun } from './support/run-owned.js';
import { TestPlatform } from './support/platform.js';

const MODEL = 'conveyor-tiny';

/** What `claude -p … --output-format json` prints at the end of a turn (the fields read here). */
interface ClaudeResult {
  type: string;
  subtype?: string;
  terminal_reason?: string;
  is_error: boolean;
  num_turns: number;
  result?: string;
  api_error_status?: number | null;
  usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number };
  modelUsage: Record<string, unknown>;
}

// Claude Code, unmodified, pointed at the platform as its users point it at a server of their own. Its
// first request carries its whole system prompt and tool list: with the generated model's small
// vocabulary some 40k tokens, so the context is 64k.
describe('Claude Code against the Messages API', () => {
  let platform: TestPlatform;
  let run: ProcessRun;
  let result: ClaudeResult;

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { CONTEXT_SIZE: '65536', PARALLEL: '2' } });
    run = await runAgentCli(
      agentBin('claude'),
      ['-p', 'Say hello in one short line.', '--model', MODEL, '--output-format', 'json'],
      {
        ANTHROPIC_BASE_URL: platform.baseUrl,
        ANTHROPIC_API_KEY: 'sk-any',
        // Its small model (titles, summaries) is the same deployment.
        ANTHROPIC_DEFAULT_HAIKU_MODEL: MODEL,
        // It asks for 32000 tokens by default. At Claude Code's temperature (1) the generated model ends its reply
        // on its own within some tens of tokens; a reply cut at this cap would fail the turn.
        CLAUDE_CODE_MAX_OUTPUT_TOKENS: '2048',
        // No traffic beyond the platform: no telemetry, update checks or error reports.
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
      },
      600_000,
    );
    const last = run.stdout.trim().split('\n').at(-1) ?? '';
    try {
      result = JSON.parse(last) as ClaudeResult;
    } catch {
      throw new Error(`claude printed no JSON result (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
    }
  }, 660_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('completes a turn: exit 0, no API error, a reply', () => {
    const { subtype, terminal_reason, api_error_status, is_error } = result;
    // On failure the diff shows how the turn ended and what it printed.
    expect({ code: run.code, is_error, subtype, terminal_reason, status: api_error_status ?? null }).toEqual({
      code: 0,
      is_error: false,
      subtype: 'success',
      terminal_reason: 'completed',
      status: null,
      ...(run.code === 0 ? {} : { result: result.result, stderr: run.stderr.slice(-2000) }),
    });
    expect(result.num_turns).toBeGreaterThanOrEqual(1);
    expect(typeof result.result).toBe('string');
  });

  it('sent its whole prompt and got tokens back from the deployment it named', () => {
    expect(result.usage.input_tokens + (result.usage.cache_read_input_tokens ?? 0)).toBeGreaterThan(10_000);
    expect(result.usage.output_tokens).toBeGreaterThan(0);
    expect(Object.keys(result.modelUsage)).toContain(MODEL);
  });
});
