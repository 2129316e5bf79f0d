import Anthropic from '@anthropic-ai/sdk';
import { hashKey } from '@conveyor/config';
import type {
  MessageBatch,
  MessageBatchIndividualResponse,
  MessageBatchList,
  MessagesErrorBody,
} from '@conveyor/openai';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { readJson } from './support/json.js';
import { TestPlatform } from './support/platform.js';

const KEY = 'sk-message-batches-0123456789';
const OTHER_KEY = 'sk-message-batches-other-0123';
const MODEL = 'conveyor-tiny';
/** Its template opens a thought for the reply, which the deployment parses out. */
const THINKER = 'conveyor-think';
/** Loads no model; a reply ends by itself after 4 tokens, unless it ignores end-of-generation. */
const EARLY_ENDER = 'conveyor-sim';
const BODY_LIMIT = 256 * 1024;
const BATCH_MAX_LINES = 1000;
const MESSAGE_BATCH_MAX_BYTES = 2 * 1024 * 1024;
const MESSAGE_BATCH_MAX_REQUESTS = 1500;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

const config = writeDeploymentsFile({
  deployments: [
    { id: MODEL, model: 'tiny', contextSize: 2048, parallel: 2, threads: 1 },
    { id: THINKER, model: 'think', contextSize: 512, parallel: 1, threads: 1, reasoningParser: 'think' },
    {
      id: EARLY_ENDER,
      engine: 'simulated',
      simulated: { ttftMs: 0, tpotMs: 1, outputTokens: 4, text: 'alpha beta gamma delta' },
      parallel: 4,
      contextSize: 1024,
    },
  ],
  apiKeys: [
    { name: 'main', sha256: hashKey(KEY) },
    { name: 'other', sha256: hashKey(OTHER_KEY) },
  ],
});

/** A request of a batch: greedy, so the tiny model's reply runs to max_tokens. */
const request = (customId: string, maxTokens = 4, params: Record<string, unknown> = {}) => ({
  custom_id: customId,
  params: {
    model: MODEL,
    max_tokens: maxTokens,
    temperature: 0,
    messages: [{ role: 'user' as const, content: `Request ${customId}` }],
    ...params,
  },
});

/** Anthropic's Message Batches API, driven by the official Node client (`@anthropic-ai/sdk`) and raw HTTP. */
describe("Anthropic's Message Batches API", () => {
  let platform: TestPlatform;
  let client: Anthropic;
  let other: Anthropic;
  const call = (method: string, path: string, body?: unknown, key = KEY) =>
    fetch(`${platform.baseUrl}${path}`, {
      method,
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  const waitForEnd = async (id: string, timeoutMs = 60_000): Promise<Anthropic.Messages.Batches.MessageBatch> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const batch = await client.messages.batches.retrieve(id);
      if (batch.processing_status === 'ended') return batch;
      if (Date.now() > until)
        throw new Error(`batch ${id} still ${batch.processing_status}: ${JSON.stringify(batch.request_counts)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const resultsOf = async (id: string): Promise<Anthropic.Messages.Batches.MessageBatchIndividualResponse[]> => {
    const lines: Anthropic.Messages.Batches.MessageBatchIndividualResponse[] = [];
    for await (const line of await client.messages.batches.results(id)) lines.push(line);
    return lines;
  };

  beforeAll(async () => {
    platform = await TestPlatform.start({
      workers: 1,
      env: {
        CONVEYOR_CONFIG: config,
        PARALLEL: '2',
        BATCH_INFLIGHT: '4',
        // Small, so the limits below are quick to reach: a message batch's body is bound by its own.
        BODY_LIMIT_BYTES: String(BODY_LIMIT),
        BATCH_MAX_LINES: String(BATCH_MAX_LINES),
        MESSAGE_BATCH_MAX_BYTES: String(MESSAGE_BATCH_MAX_BYTES),
        MESSAGE_BATCH_MAX_REQUESTS: String(MESSAGE_BATCH_MAX_REQUESTS),
      },
    });
    client = new Anthropic({ baseURL: platform.baseUrl, apiKey: KEY, maxRetries: 0, timeout: 60_000 });
    other = new Anthropic({ baseURL: platform.baseUrl, apiKey: OTHER_KEY, maxRetries: 0, timeout: 60_000 });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
  });

  describe('a batch run to its end', () => {
    const maxTokens = new Map([
      ['alpha', 2],
      ['beta', 3],
      ['gamma_1', 4],
      ['delta-2', 5],
      ['epsilon', 6],
    ]);
    let created: Anthropic.Messages.Batches.MessageBatch;
    let ended: Anthropic.Messages.Batches.MessageBatch;

    beforeAll(async () => {
      created = await client.messages.batches.create({
        requests: [...maxTokens].map(([id, n]) => request(id, n)),
      });
      ended = await waitForEnd(created.id);
    }, 90_000);

    it('is created in_progress with every request processing, times in RFC 3339, and no results yet', () => {
      expect(created).toMatchObject({
        type: 'message_batch',
        processing_status: 'in_progress',
        request_counts: { processing: 5, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
        ended_at: null,
        cancel_initiated_at: null,
        archived_at: null,
        results_url: null,
      });
      expect(created.id).toMatch(/^msgbatch_[0-9a-f]{24}$/);
      expect(created.created_at).toMatch(RFC3339);
      expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(24 * 3600 * 1000);
    });

    it('ends with every request succeeded, an end time and a results URL', () => {
      expect(ended).toMatchObject({
        id: created.id,
        processing_status: 'ended',
        request_counts: { processing: 0, succeeded: 5, errored: 0, canceled: 0, expired: 0 },
        results_url: `/v1/messages/batches/${created.id}/results`,
      });
      expect(ended.ended_at).toMatch(RFC3339);
    });

    it("gives one result per custom_id, each that request's own message", async () => {
      const lines = await resultsOf(created.id);
      expect(lines.map((l) => l.custom_id).sort()).toEqual([...maxTokens.keys()].sort());
      for (const { custom_id, result } of lines) {
        if (result.type !== 'succeeded') throw new Error(`${custom_id}: ${JSON.stringify(result)}`);
        const { message } = result;
        expect(message).toMatchObject({ type: 'message', role: 'assistant', model: MODEL, stop_reason: 'max_tokens' });
        expect(message.id).toMatch(/^msg_/);
        expect(message.content[0]?.type).toBe('text');
        // Each request asked for its own length: the result under its custom_id has that many tokens.
        expect(message.usage.output_tokens).toBe(maxTokens.get(custom_id));
        expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)).toBeGreaterThan(0);
      }
    });

    it('serves the results as JSON lines over plain HTTP, to the key that made the batch', async () => {
      const res = await call('GET', `/v1/messages/batches/${created.id}/results`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/jsonl/);
      const lines = (await res.text())
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as MessageBatchIndividualResponse);
      expect(lines).toHaveLength(5);
      expect(Object.keys(lines[0]!).sort()).toEqual(['custom_id', 'result']);
    });

    it('keeps its requests and results out of the Files API', async () => {
      const files = await readJson<{ data: { filename: string }[] }>(
        await fetch(`${platform.baseUrl}/v1/files`, { headers: { authorization: `Bearer ${KEY}` } }),
      );
      expect(files.data.filter((f) => f.filename.startsWith(created.id))).toEqual([]);
    });
  });

  it("shows the reply's thought as a thinking block to the request that turned thinking on, and only to it", async () => {
    const think = { model: THINKER, thinking: { type: 'enabled', budget_tokens: 4 } };
    const batch = await client.messages.batches.create({
      requests: [request('thinks', 8, think), request('plain', 8, { model: THINKER })],
    });
    await waitForEnd(batch.id);
    const results = new Map((await resultsOf(batch.id)).map((l) => [l.custom_id, l.result]));
    const content = (id: string) => {
      const result = results.get(id);
      if (result?.type !== 'succeeded') throw new Error(`${id}: ${JSON.stringify(result)}`);
      return result.message.content;
    };
    const thought = content('thinks')[0];
    expect(thought).toMatchObject({ type: 'thinking', signature: '' });
    expect(thought?.type === 'thinking' && thought.thinking.length).toBeGreaterThan(0);
    expect(content('plain').map((b) => b.type)).not.toContain('thinking');
  });

  it('runs each request with ignore_eos to its max_tokens, as /v1/messages runs the same body', async () => {
    // On a deployment whose replies end by themselves well before max_tokens, unless they ignore it.
    const params = { model: EARLY_ENDER, ignore_eos: true };
    const ids = Array.from({ length: 24 }, (_, i) => `eos-${i}`);
    const batch = await client.messages.batches.create({ requests: ids.map((id) => request(id, 24, params)) });
    const sync = await client.messages.create({ ...request('sync', 24, params).params, stream: false });
    expect({ stop: sync.stop_reason, tokens: sync.usage.output_tokens }).toEqual({ stop: 'max_tokens', tokens: 24 });
    await waitForEnd(batch.id, 120_000);
    const ended = (await resultsOf(batch.id)).map(({ custom_id, result }) =>
      result.type === 'succeeded'
        ? { custom_id, stop: result.message.stop_reason, tokens: result.message.usage.output_tokens }
        : { custom_id, result },
    );
    expect(ended.sort((a, b) => a.custom_id.localeCompare(b.custom_id))).toEqual(
      [...ids].sort().map((custom_id) => ({ custom_id, stop: 'max_tokens', tokens: 24 })),
    );
  }, 150_000);

  it('refuses results before the batch has ended, with a 409 in Anthropic shape', async () => {
    const batch = await client.messages.batches.create({
      requests: Array.from({ length: 16 }, (_, i) => request(`early-${i}`, 64)),
    });
    const res = await call('GET', `/v1/messages/batches/${batch.id}/results`);
    expect(res.status).toBe(409);
    expect(await readJson<MessagesErrorBody>(res)).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('still processing') },
    });
    await expect(client.messages.batches.results(batch.id)).rejects.toThrow(/results_url/);
    // Still processing: deleting it is refused too.
    expect((await call('DELETE', `/v1/messages/batches/${batch.id}`)).status).toBe(409);
    await client.messages.batches.cancel(batch.id);
    await waitForEnd(batch.id);
  });

  it('cancels a long batch: running requests finish, the rest end canceled, each custom_id once', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `long-${i}`);
    const batch = await client.messages.batches.create({ requests: ids.map((id) => request(id, 48)) });
    for (let i = 0; (await client.messages.batches.retrieve(batch.id)).request_counts.succeeded < 2; i++) {
      if (i > 600) throw new Error('no request of the batch finished');
      await new Promise((r) => setTimeout(r, 100));
    }
    const canceling = await client.messages.batches.cancel(batch.id);
    expect(canceling.processing_status).toBe('canceling');
    expect(canceling.cancel_initiated_at).toMatch(RFC3339);

    const ended = await waitForEnd(batch.id);
    const counts = ended.request_counts;
    expect(counts.processing).toBe(0);
    expect(counts.canceled).toBeGreaterThan(0);
    expect(counts.succeeded).toBeGreaterThanOrEqual(2);
    expect(counts.succeeded + counts.errored + counts.canceled + counts.expired).toBe(40);
    expect(ended.cancel_initiated_at).toBe(canceling.cancel_initiated_at);

    const lines = await resultsOf(batch.id);
    expect(lines.map((l) => l.custom_id).sort()).toEqual([...ids].sort());
    const byType = (type: string) => lines.filter((l) => l.result.type === type).length;
    expect(byType('succeeded')).toBe(counts.succeeded);
    expect(byType('canceled')).toBe(counts.canceled);
    expect(lines.find((l) => l.result.type === 'canceled')!.result).toEqual({ type: 'canceled' });

    // Cancelling an ended batch is refused.
    expect((await call('POST', `/v1/messages/batches/${batch.id}/cancel`)).status).toBe(409);
  });

  it("lists the key's batches newest first, paging with after_id and before_id", async () => {
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      made.unshift((await client.messages.batches.create({ requests: [request(`list-${i}`, 1)] })).id);
    }
    const page = async (query: string) =>
      readJson<MessageBatchList>(await call('GET', `/v1/messages/batches?${query}`));
    const first = await page('limit=2');
    expect(first.data.map((b) => b.id)).toEqual(made.slice(0, 2));
    expect(first).toMatchObject({ has_more: true, first_id: made[0], last_id: made[1] });
    const second = await page(`limit=2&after_id=${first.last_id}`);
    expect(second.data[0]!.id).toBe(made[2]);
    const back = await page(`limit=2&before_id=${second.first_id}`);
    expect(back).toMatchObject({ first_id: made[0], last_id: made[1], has_more: false });
    expect(back.data.map((b) => b.id)).toEqual(made.slice(0, 2));

    // The client's pager walks every page, newest first.
    const all: MessageBatch[] = [];
    for await (const b of client.messages.batches.list({ limit: 2 })) all.push(b as MessageBatch);
    expect(all.map((b) => b.id).slice(0, 3)).toEqual(made);
    const created = all.map((b) => Date.parse(b.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    expect(new Set(all.map((b) => b.id)).size).toBe(all.length);

    for (const id of made) await waitForEnd(id);
  });

  it('deletes an ended batch, after which it is gone from retrieve, results and list', async () => {
    const batch = await client.messages.batches.create({ requests: [request('doomed', 1)] });
    await waitForEnd(batch.id);
    expect(await client.messages.batches.delete(batch.id)).toEqual({ id: batch.id, type: 'message_batch_deleted' });
    await expect(client.messages.batches.retrieve(batch.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const res = await call('GET', `/v1/messages/batches/${batch.id}/results`);
    expect(res.status).toBe(404);
    expect((await readJson<MessagesErrorBody>(res)).error.type).toBe('not_found_error');
    const listed = await readJson<MessageBatchList>(await call('GET', '/v1/messages/batches?limit=1000'));
    expect(listed.data.map((b) => b.id)).not.toContain(batch.id);
  });

  it("keeps a batch the key's own: another key gets 404 for it and does not list it", async () => {
    const batch = await client.messages.batches.create({ requests: [request('mine', 1)] });
    await waitForEnd(batch.id);
    for (const [method, path] of [
      ['GET', `/v1/messages/batches/${batch.id}`],
      ['GET', `/v1/messages/batches/${batch.id}/results`],
      ['POST', `/v1/messages/batches/${batch.id}/cancel`],
      ['DELETE', `/v1/messages/batches/${batch.id}`],
    ] as const) {
      const res = await call(method, path, undefined, OTHER_KEY);
      expect({ path, method, status: res.status }).toEqual({ path, method, status: 404 });
      expect((await readJson<MessagesErrorBody>(res)).error.type).toBe('not_found_error');
    }
    await expect(other.messages.batches.retrieve(batch.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const theirs: string[] = [];
    for await (const b of other.messages.batches.list()) theirs.push(b.id);
    expect(theirs).not.toContain(batch.id);
    // Nor is it one of OpenAI's batches.
    const openai = await readJson<{ data: { id: string }[] }>(
      await fetch(`${platform.baseUrl}/v1/batches?limit=100`, { headers: { authorization: `Bearer ${KEY}` } }),
    );
    expect(openai.data.map((b) => b.id)).not.toContain(batch.id);
    expect((await call('GET', `/v1/messages/batches/${batch.id}`)).status).toBe(200);
  });

  describe("Anthropic's limits, a body read as it arrives", () => {
    /** A request of the simulated deployment, padded to about `bytes` bytes of JSON. */
    const padded = (customId: string, bytes: number) => ({
      custom_id: customId,
      params: {
        model: EARLY_ENDER,
        max_tokens: 2,
        messages: [{ role: 'user' as const, content: `${customId} ${'x'.repeat(Math.max(0, bytes - 120))}` }],
      },
    });
    /** The body sent chunked, with no Content-Length: only counting what arrives can bound it. */
    const chunked = (text: string) =>
      fetch(`${platform.baseUrl}/v1/messages/batches`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: new ReadableStream({
          start(controller) {
            const bytes = Buffer.from(text);
            for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.subarray(i, i + 64 * 1024));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);

    it('takes more requests than BATCH_MAX_LINES and more bytes than BODY_LIMIT_BYTES, each request once', async () => {
      const ids = Array.from({ length: MESSAGE_BATCH_MAX_REQUESTS }, (_, i) => `big-${i}`);
      const body = JSON.stringify({ requests: ids.map((id) => padded(id, 1000)) });
      expect(body.length).toBeGreaterThan(4 * BODY_LIMIT);
      expect(body.length).toBeLessThan(MESSAGE_BATCH_MAX_BYTES);
      const res = await chunked(body);
      expect(res.status).toBe(200);
      const batch = await readJson<MessageBatch>(res);
      expect(batch.request_counts.processing).toBe(ids.length);
      const ended = await waitForEnd(batch.id, 120_000);
      expect(ended.request_counts).toMatchObject({ succeeded: ids.length, errored: 0 });
      const results = await resultsOf(batch.id);
      expect(results.map((r) => r.custom_id).sort()).toEqual([...ids].sort());
    }, 180_000);

    it('refuses a body over MESSAGE_BATCH_MAX_BYTES with a 413, declared or counted, and keeps nothing', async () => {
      const before = await readJson<MessageBatchList>(await call('GET', '/v1/messages/batches?limit=1000'));
      // Fewer requests than the limit, each one the route takes: only the bytes are too many.
      const over = Array.from({ length: 1400 }, (_, i) => padded(`over-${i}`, 1600));
      const text = JSON.stringify({ requests: over });
      expect(text.length).toBeGreaterThan(MESSAGE_BATCH_MAX_BYTES);
      for (const res of [await call('POST', '/v1/messages/batches', JSON.parse(text)), await chunked(text)]) {
        expect(res.status).toBe(413);
        expect(await readJson<MessagesErrorBody>(res)).toEqual({
          type: 'error',
          error: { type: 'request_too_large', message: expect.stringContaining(String(MESSAGE_BATCH_MAX_BYTES)) },
        });
      }
      const after = await readJson<MessageBatchList>(await call('GET', '/v1/messages/batches?limit=1000'));
      expect(after.data.length).toBe(before.data.length);
    });

    it('refuses one request more than MESSAGE_BATCH_MAX_REQUESTS with a 400 naming requests', async () => {
      const ids = Array.from({ length: MESSAGE_BATCH_MAX_REQUESTS + 1 }, (_, i) => `many-${i}`);
      const res = await call('POST', '/v1/messages/batches', { requests: ids.map((id) => request(id)) });
      expect(res.status).toBe(400);
      const error = await readJson<MessagesErrorBody>(res);
      expect(error.error).toMatchObject({ type: 'invalid_request_error' });
      expect(error.error.message).toContain(`at most ${MESSAGE_BATCH_MAX_REQUESTS}`);
    });
  });

  describe('bad input', () => {
    const ok = request('fine', 1);
    it.each<[string, unknown, string]>([
      ['a body without requests', {}, 'requests'],
      ['no requests at all', { requests: [] }, 'requests'],
      ['a request that is not an object', { requests: [ok, 'nope'] }, 'requests[1]'],
      ['a custom_id with a space', { requests: [{ ...ok, custom_id: 'has space' }] }, 'requests[0].custom_id'],
      ['a custom_id of 65 characters', { requests: [{ ...ok, custom_id: 'x'.repeat(65) }] }, 'requests[0].custom_id'],
      ['a custom_id used twice', { requests: [ok, ok] }, 'requests[1].custom_id'],
      ['params missing', { requests: [{ custom_id: 'a' }] }, 'requests[0].params'],
      ['params without max_tokens', { requests: [request('a', 0)] }, 'requests[0].params.max_tokens'],
      ['an unknown model', { requests: [ok, request('b', 1, { model: 'nope' })] }, 'requests[1].params.model'],
      ['a request that asks to stream', { requests: [request('a', 1, { stream: true })] }, 'requests[0].params.stream'],
      [
        'a conversation ending with the assistant',
        { requests: [request('a', 1, { messages: [{ role: 'assistant', content: 'Hi' }] })] },
        'requests[0].params.messages[0].role',
      ],
    ])('refuses %s with a 400 invalid_request_error naming the field', async (_name, body, field) => {
      const before = await readJson<MessageBatchList>(await call('GET', '/v1/messages/batches?limit=1000'));
      const res = await call('POST', '/v1/messages/batches', body);
      expect(res.status).toBe(400);
      const error = await readJson<MessagesErrorBody>(res);
      expect(error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(error.error.message).toContain(field);
      const after = await readJson<MessageBatchList>(await call('GET', '/v1/messages/batches?limit=1000'));
      expect(after.data.length).toBe(before.data.length);
    });

    it('refuses malformed JSON, a malformed id, a bad limit and a paging cursor that is no batch id', async () => {
      const raw = await fetch(`${platform.baseUrl}/v1/messages/batches`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: '{"requests": [',
      });
      expect(raw.status).toBe(400);
      expect((await readJson<MessagesErrorBody>(raw)).type).toBe('error');
      for (const path of [
        '/v1/messages/batches/batch_0123',
        '/v1/messages/batches?limit=0',
        '/v1/messages/batches?limit=1001',
        '/v1/messages/batches?after_id=nope',
      ]) {
        const res = await call('GET', path);
        expect({ path, status: res.status }).toEqual({ path, status: 400 });
        expect((await readJson<MessagesErrorBody>(res)).error.type).toBe('invalid_request_error');
      }
      const unknown = await call('GET', `/v1/messages/batches/msgbatch_${'0'.repeat(24)}`);
      expect(unknown.status).toBe(404);
      const client400 = client.messages.batches.create({ requests: [{ ...ok, custom_id: '' }] });
      await expect(client400).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    });

    it('asks for a key like every Messages route', async () => {
      const res = await fetch(`${platform.baseUrl}/v1/messages/batches`);
      expect(res.status).toBe(401);
      expect((await readJson<MessagesErrorBody>(res)).error.type).toBe('authentication_error');
    });
  });
});
