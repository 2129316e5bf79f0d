import OpenAI from 'openai';
import type { ChatCompletion, Model, ModelList, OpenAiErrorBody } from '@conveyor/openai';
import { chatLine, fileLines, jsonl, submitBatch, waitForBatch } from './support/batches.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { readJson } from './support/json.js';
import { TestPlatform } from './support/platform.js';
import { readSse } from './support/sse.js';

const MODEL = 'conveyor-tiny';
const hello = [{ role: 'user', content: 'Hello aliases.' }];

/** One tiny deployment that hard-coded names reach: exact and pattern aliases from the file and the environment. */
const config = writeDeploymentsFile({
  deployments: [
    { id: MODEL, model: 'tiny', contextSize: 1024, parallel: 2, alias: { org: 'acme', app: 'chat' }, auth: 'public' },
  ],
  modelAliases: [
    { name: 'gpt-4o', deployment: MODEL },
    { name: 'gpt-5*', deployment: MODEL },
  ],
});

describe('model aliases', () => {
  let platform: TestPlatform;
  const post = (path: string, body: object, headers: Record<string, string> = {}) =>
    fetch(`${platform.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    platform = await TestPlatform.start({
      env: {
        CONVEYOR_CONFIG: config,
        MODEL_ALIASES: `claude-*=${MODEL},text-*=${MODEL}`,
        DATA_DIR: `/tmp/conveyor-test-data-${process.pid}-aliases`,
      },
    });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('answers a chat completion for a name a pattern reaches, echoing that name', async () => {
    const res = await post('/v1/chat/completions', { model: 'gpt-5-codex', messages: hello, max_tokens: 3 });
    const body = await readJson<ChatCompletion>(res);
    expect(res.status).toBe(200);
    expect(body.model).toBe('gpt-5-codex');
    expect(body.choices[0]!.message.role).toBe('assistant');
  });

  it('echoes the name in every chunk of a stream', async () => {
    const res = await post('/v1/chat/completions', { model: 'gpt-4o', messages: hello, max_tokens: 3, stream: true });
    expect(res.status).toBe(200);
    const { payloads } = await readSse(res);
    const chunks = payloads.filter((p) => p !== '[DONE]').map((p) => JSON.parse(p) as { model: string });
    expect(chunks.length).toBeGreaterThan(1);
    expect(new Set(chunks.map((c) => c.model))).toEqual(new Set(['gpt-4o']));
  });

  it('answers Messages and count_tokens for a claude-* name from MODEL_ALIASES', async () => {
    const message = { model: 'claude-sonnet-4-5', max_tokens: 3, messages: [{ role: 'user', content: 'Hi' }] };
    const res = await post('/v1/messages', message, { 'anthropic-version': '2023-06-01' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ type: 'message', model: 'claude-sonnet-4-5' });
    const counted = await post('/v1/messages/count_tokens', { model: 'claude-sonnet-4-5', messages: message.messages });
    expect(counted.status).toBe(200);
    expect(await counted.json()).toEqual({ input_tokens: expect.any(Number) });
  });

  it('answers the legacy completions and Responses routes for an alias', async () => {
    const completion = await post('/v1/completions', { model: 'text-davinci-003', prompt: 'Once', max_tokens: 2 });
    expect(completion.status).toBe(200);
    expect(await completion.json()).toMatchObject({ model: 'text-davinci-003' });
    const response = await post('/v1/responses', { model: 'gpt-5', input: 'Hi', max_output_tokens: 16, store: false });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ object: 'response', model: 'gpt-5' });
  });

  it('serves an alias on the hosted app route of the deployment it reaches', async () => {
    const res = await post('/acme/chat/v1/chat/completions', { model: 'gpt-5-mini', messages: hello, max_tokens: 2 });
    expect(res.status).toBe(200);
    expect((await readJson<ChatCompletion>(res)).model).toBe('gpt-5-mini');
  });

  it('runs a batch line that names an alias, its result under that name', async () => {
    const client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
    const batch = await submitBatch(client, jsonl([chatLine('aliased', { model: 'gpt-5-codex' })]));
    const done = await waitForBatch(client, batch.id);
    expect(done.status).toBe('completed');
    const [line] = await fileLines<ChatCompletion>(client, done.output_file_id);
    expect(line).toMatchObject({
      custom_id: 'aliased',
      response: { status_code: 200, body: { model: 'gpt-5-codex' } },
    });
  });

  it('still refuses a name nothing reaches with 404 model_not_found', async () => {
    const res = await post('/v1/chat/completions', { model: 'llama-3-70b', messages: hello, max_tokens: 2 });
    expect(res.status).toBe(404);
    expect((await readJson<OpenAiErrorBody>(res)).error.code).toBe('model_not_found');
  });

  it('lists the exact aliases after the deployment, patterns not, and answers for a pattern by name', async () => {
    const list = await readJson<ModelList>(await fetch(`${platform.baseUrl}/v1/models`));
    expect(list.data.map((m) => [m.id, m.alias_of])).toEqual([
      [MODEL, undefined],
      ['gpt-4o', MODEL],
    ]);
    const one = await readJson<Model>(await fetch(`${platform.baseUrl}/v1/models/gpt-5-codex`));
    expect(one).toMatchObject({ id: 'gpt-5-codex', alias_of: MODEL, status: 'ready' });
    expect((await fetch(`${platform.baseUrl}/v1/models/llama-3-70b`)).status).toBe(404);
  });
});
