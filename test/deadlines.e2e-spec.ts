import { createHash } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ChatCompletion, OpenAiErrorBody } from '@conveyor/openai';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { readJson } from './support/json.js';
import { TestPlatform } from './support/platform.js';
import { readSse } from './support/sse.js';

const OPEN = 'sk-open-key';
const HASTY = 'sk-hasty-key';
const digest = (key: string) => createHash('sha256').update(key).digest('hex');
/** A reply of `slow` takes 20 s: long past every deadline here. */
const SLOW = { ttftMs: 50, tpotMs: 50, outputTokens: 400, text: 'tick tock' };

const config = writeDeploymentsFile({
  deployments: [
    { id: 'slow', engine: 'simulated', simulated: SLOW, parallel: 1, contextSize: 1024 },
    { id: 'bounded', engine: 'simulated', simulated: SLOW, parallel: 1, contextSize: 1024, deadlineMs: 700 },
  ],
  apiKeys: [
    { name: 'open', sha256: digest(OPEN) },
    { name: 'hasty', sha256: digest(HASTY), deadlineMs: 700 },
  ],
});

const body = (extra: object = {}) => ({
  model: 'slow',
  messages: [{ role: 'user', content: 'Sixteen bytes!!!' }],
  max_tokens: 400,
  ...extra,
});

describe('request deadlines', () => {
  let platform: TestPlatform;
  const chat = (extra: object = {}, headers: Record<string, string> = {}, key = OPEN, signal?: AbortSignal) =>
    fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
      body: JSON.stringify(body(extra)),
      signal,
    });
  const waiting = async (deployment: string): Promise<number> => {
    const res = await fetch(`${platform.baseUrl}/scaling/deployments/${deployment}`);
    return ((await res.json()) as { waiting: number }).waiting;
  };
  const running = async (deployment: string): Promise<number> => {
    const res = await fetch(`${platform.baseUrl}/scaling/deployments/${deployment}`);
    return ((await res.json()) as { running: number }).running;
  };
  const until = async (what: () => Promise<boolean>, label: string): Promise<void> => {
    for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 25))) {
      if (await what()) return;
    }
    throw new Error(`never: ${label}`);
  };
  /** The deadline error as OpenAI's shape carries it, with the header that keeps SDKs from retrying it. */
  const expectDeadline = async (res: Response, where: RegExp) => {
    expect(res.status).toBe(504);
    expect(res.headers.get('x-should-retry')).toBe('false');
    const { error } = await readJson<OpenAiErrorBody>(res);
    expect(error).toMatchObject({ type: 'server_error', code: 'deadline_exceeded' });
    expect(error.message).toMatch(where);
    return error.message;
  };

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config } });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('withdraws a request still queued at its deadline, saying how long it waited', async () => {
    const blocker = new AbortController();
    const held = chat({}, {}, OPEN, blocker.signal).catch(() => null);
    await until(async () => (await running('slow')) === 1, 'the sequence is busy');
    const started = Date.now();
    const res = await chat({}, { 'x-conveyor-deadline-ms': '600' });
    const message = await expectDeadline(res, /deadline of 600 ms passed after \d+ ms in the queue.*withdrawn/);
    expect(Number(/after (\d+) ms/.exec(message)![1])).toBeGreaterThanOrEqual(500);
    expect(Date.now() - started).toBeGreaterThanOrEqual(590);
    // Gone from the queue: nothing is left for a worker to take.
    expect(await waiting('slow')).toBe(0);
    blocker.abort();
    await held;
    await until(async () => (await running('slow')) === 0, 'the blocker is stopped');
  });

  it('stops a running request at its deadline: its sequence is free for the next one at once', async () => {
    const res = await chat({}, { 'x-conveyor-deadline-ms': '800' });
    await expectDeadline(res, /deadline of 800 ms passed after \d+ ms in the queue and \d+ ms generating.*stopped/);
    // Not stopped, it would hold the only sequence for 20 s.
    await until(async () => (await running('slow')) === 0, 'the job is stopped');
    const next = await chat({ max_tokens: 2 });
    expect(next.status).toBe(200);
    expect((await readJson<ChatCompletion>(next)).usage.completion_tokens).toBe(2);
  });

  it("ends a stream with the deadline as the stream's error event", async () => {
    const res = await chat({ stream: true }, { 'x-conveyor-deadline-ms': '800' });
    expect(res.status).toBe(200);
    const { payloads } = await readSse(res);
    const last = JSON.parse(payloads.filter((p) => p !== '[DONE]').at(-1)!) as OpenAiErrorBody;
    expect(last.error).toMatchObject({ code: 'deadline_exceeded' });
    expect(last.error.message).toMatch(/generating/);
    // It streamed text before its deadline.
    expect(payloads.some((p) => p.includes('"content":"tick'))).toBe(true);
    await until(async () => (await running('slow')) === 0, 'the job is stopped');
  });

  it("answers Anthropic's routes in Anthropic's shape", async () => {
    const res = await fetch(`${platform.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': OPEN, 'x-conveyor-deadline-ms': '600' },
      body: JSON.stringify({ model: 'slow', max_tokens: 400, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(504);
    const reply = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(reply).toMatchObject({ type: 'error', error: { type: 'timeout_error' } });
    expect(reply.error.message).toMatch(/deadline of 600 ms/);
    await until(async () => (await running('slow')) === 0, 'the job is stopped');
  });

  it("applies the key's deadline and the deployment's when the request names none, and the shortest of all", async () => {
    await expectDeadline(await chat({}, {}, HASTY), /deadline of 700 ms/);
    await until(async () => (await running('slow')) === 0, 'the job is stopped');
    await expectDeadline(await chat({ model: 'bounded' }), /deadline of 700 ms/);
    await until(async () => (await running('bounded')) === 0, 'the job is stopped');
    await expectDeadline(await chat({ model: 'bounded' }, { 'x-conveyor-deadline-ms': '300' }), /deadline of 300 ms/);
    await until(async () => (await running('bounded')) === 0, 'the job is stopped');
  });

  it('refuses a malformed deadline header with a 400 naming it', async () => {
    const res = await chat({}, { 'x-conveyor-deadline-ms': 'soon' });
    expect(res.status).toBe(400);
    expect((await readJson<OpenAiErrorBody>(res)).error.param).toBe('x-conveyor-deadline-ms');
  });

  it('gives the OpenAI SDK our error before its own timeout fires, and the SDK does not retry it', async () => {
    // The SDK sends a request's timeout option as x-stainless-timeout (whole seconds); it retries twice by default.
    const client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: OPEN });
    const started = Date.now();
    const params = body() as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const error = await client.chat.completions.create(params, { timeout: 6000 }).then(
      () => null,
      (err: unknown) => err,
    );
    const ms = Date.now() - started;
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).not.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('deadline_exceeded');
    // 90% of its 6 s, once: before its own timeout (it would have thrown APIConnectionTimeoutError, not
    // our 504), and not after a retry (a second attempt would take another 5.4 s).
    expect(ms).toBeGreaterThanOrEqual(5350);
    expect(ms).toBeLessThan(2 * 5350);
    await until(async () => (await running('slow')) === 0, 'the job is stopped');
  });

  it("gives the Anthropic SDK our error, in Anthropic's shape, before its own timeout fires", async () => {
    // This SDK sends its timeout as x-stainless-timeout on every request.
    const client = new Anthropic({ baseURL: platform.baseUrl, apiKey: OPEN, timeout: 6000, maxRetries: 0 });
    const started = Date.now();
    const error = await client.messages
      .create({ model: 'slow', max_tokens: 400, messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => null,
        (err: unknown) => err,
      );
    const ms = Date.now() - started;
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(504);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'timeout_error' },
    });
    // Before its own timeout: our 504, not the SDK's timeout error (maxRetries: 0, so no retry to rule out).
    expect(ms).toBeGreaterThanOrEqual(5350);
    await until(async () => (await running('slow')) === 0, 'the job is stopped');
  });
});
