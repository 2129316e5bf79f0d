import OpenAI from 'openai';
import { Queue } from 'bullmq';
import type { OpenAiErrorBody } from '@conveyor/openai';
import { deploymentQueueName } from '@conveyor/queue';
import { chatLine, fileLines, jsonl, submitBatch, waitForBatch } from './support/batches.js';
import { readJson } from './support/json.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';
import { EVENTUALLY_MS } from './support/jobs.js';

const MODEL = 'conveyor-tiny';
const INFLIGHT = 8;

describe('batches: Files + Batches API through the queue', () => {
  let platform: TestPlatform;
  let client: OpenAI;
  let queue: Queue;
  const queued = async () => {
    const c = await queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed');
    return c.waiting + c.prioritized + c.active + c.delayed;
  };

  beforeAll(async () => {
    platform = await TestPlatform.start({
      workers: 2,
      env: {
        PARALLEL: '2',
        BATCH_INFLIGHT: String(INFLIGHT),
        WORKER_LOCK_MS: '1500',
        WORKER_STALLED_INTERVAL_MS: '500',
        DATA_DIR: `/tmp/conveyor-test-data-${process.pid}`,
      },
    });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused' });
    queue = new Queue(deploymentQueueName(MODEL), { connection: { url: REDIS_URL }, prefix: platform.prefix });
  });

  afterAll(async () => {
    await queue?.close();
    await platform?.stop();
  });

  it('runs a 200-line batch to completion with exactly one output line per custom_id, never holding more than its window in Redis', async () => {
    const ids = Array.from({ length: 200 }, (_, i) => `req-${i}`);
    const created = await submitBatch(client, jsonl(ids.map((id) => chatLine(id))));
    expect(created).toMatchObject({
      object: 'batch',
      status: 'validating',
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });

    let maxQueued = 0;
    const batch = await waitForBatch(client, created.id, (b) => {
      void queued().then((n) => (maxQueued = Math.max(maxQueued, n)));
      return b.status === 'completed';
    });
    expect(batch.request_counts).toEqual({ total: 200, completed: 200, failed: 0 });
    expect(batch.error_file_id).toBeNull();
    for (const field of ['in_progress_at', 'finalizing_at', 'completed_at'] as const)
      expect(batch[field]).toEqual(expect.any(Number));
    expect(maxQueued).toBeLessThanOrEqual(INFLIGHT);

    const out = await fileLines(client, batch.output_file_id);
    expect(out.map((l) => l.custom_id).sort()).toEqual([...ids].sort());
    expect(out[0]).toMatchObject({
      id: expect.stringMatching(/^batch_req_/),
      response: {
        status_code: 200,
        request_id: expect.any(String),
        body: { object: 'chat.completion', model: MODEL, usage: { completion_tokens: 4 } },
      },
      error: null,
    });
    expect((await client.batches.list({ limit: 5 })).data.map((b) => b.id)).toContain(batch.id);
  });

  it('fails validation of a file with invalid lines, naming each line, and runs none of it', async () => {
    const content = jsonl([
      chatLine('ok-1'),
      '{not json',
      { custom_id: 'bad-url', url: '/v1/embeddings', body: chatLine('x').body },
      chatLine('bad-temp', { temperature: 9 }),
      chatLine('ok-1'),
      chatLine('bad-model', { model: 'nope' }),
      { custom_id: 'bad-method', method: 'GET', body: chatLine('y').body },
    ]);
    const before = await queued();
    const batch = await waitForBatch(client, (await submitBatch(client, content)).id);
    expect(batch.status).toBe('failed');
    expect(batch.failed_at).toEqual(expect.any(Number));
    const errors = batch.errors!.data!.map((e) => [e.line, e.code]);
    expect(errors).toEqual([
      [2, 'invalid_json_line'],
      [3, 'mismatched_url'],
      [4, 'invalid_request'],
      [5, 'duplicate_custom_id'],
      [6, 'model_not_found'],
      [7, 'invalid_request'],
    ]);
    expect(batch.errors!.data![2].param).toBe('body.temperature');
    expect(await queued()).toBe(before);
  });

  it('runs a file that starts with a UTF-8 byte-order mark, as Windows editors save one', async () => {
    const created = await submitBatch(client, '\uFEFF' + jsonl([chatLine('bom-1'), chatLine('bom-2')]));
    const batch = await waitForBatch(client, created.id);
    expect(batch.errors?.data ?? []).toEqual([]);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const out = await fileLines(client, batch.output_file_id);
    expect(out.map((l) => l.custom_id).sort()).toEqual(['bom-1', 'bom-2']);
  });

  it('serves partial output while in progress, and a cancel lets in-flight lines finish and the rest end as batch_cancelled', async () => {
    const ids = Array.from({ length: 120 }, (_, i) => `c-${i}`);
    const created = await submitBatch(client, jsonl(ids.map((id) => chatLine(id, { max_tokens: 48 }))));
    const running = await waitForBatch(
      client,
      created.id,
      (b) => b.status === 'in_progress' && (b.request_counts?.completed ?? 0) >= 10,
    );
    const partial = await fileLines(client, running.output_file_id);
    expect(partial.length).toBeGreaterThanOrEqual(10);

    const cancelling = await client.batches.cancel(created.id);
    expect(cancelling.status).toBe('cancelling');
    const batch = await waitForBatch(client, created.id);
    expect(batch.status).toBe('cancelled');
    expect(batch.cancelled_at).toEqual(expect.any(Number));
    const out = await fileLines(client, batch.output_file_id);
    const errs = await fileLines(client, batch.error_file_id);
    expect(out.length).toBeLessThan(120);
    expect(out.length).toBe(batch.request_counts!.completed);
    expect(errs.length).toBeGreaterThan(0);
    for (const e of errs) expect(e).toMatchObject({ response: null, error: { code: 'batch_cancelled' } });
    expect([...out, ...errs].map((l) => l.custom_id).sort()).toEqual([...ids].sort());
  });

  it('expires past its completion window: finished lines kept, the rest batch_expired', async () => {
    const ids = Array.from({ length: 150 }, (_, i) => `e-${i}`);
    const created = await submitBatch(client, jsonl(ids.map((id) => chatLine(id, { max_tokens: 48 }))), '2s');
    const batch = await waitForBatch(client, created.id);
    expect(batch.status).toBe('expired');
    expect(batch.expired_at).toEqual(expect.any(Number));
    const out = await fileLines(client, batch.output_file_id);
    const errs = await fileLines(client, batch.error_file_id);
    expect(out.length).toBeGreaterThan(0);
    expect(errs.every((e) => e.error!.code === 'batch_expired')).toBe(true);
    expect([...out, ...errs].map((l) => l.custom_id).sort()).toEqual([...ids].sort());
  });

  it('answers a sync request promptly while a batch saturates every worker', async () => {
    const long = { max_tokens: 96 };
    const t0 = Date.now();
    await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'baseline' }],
      temperature: 0,
      ...long,
    });
    const slot = Date.now() - t0;

    const created = await submitBatch(client, jsonl(Array.from({ length: 80 }, (_, i) => chatLine(`p-${i}`, long))));
    await waitForBatch(
      client,
      created.id,
      (b) => b.status === 'in_progress' && (b.request_counts?.completed ?? 0) >= 4,
    );
    // Saturated: every slot busy and batch lines waiting behind them.
    for (const until = Date.now() + EVENTUALLY_MS; (await queue.getPrioritizedCount()) === 0;) {
      if (Date.now() > until) throw new Error('the batch never had lines waiting');
      await new Promise((r) => setTimeout(r, 10));
    }
    const t1 = Date.now();
    const reply = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'urgent' }],
      max_tokens: 2,
      temperature: 0,
    });
    const waited = Date.now() - t1;
    expect(reply.usage?.completion_tokens).toBe(2);
    // Behind the batch it would wait for several slots; with priority, at most one running line.
    expect(waited).toBeLessThan(slot * 1.5 + 400);
    await client.batches.cancel(created.id);
    await waitForBatch(client, created.id);
  });

  it('shares the workers between batches: a later batch progresses while an earlier one still runs', async () => {
    const lines = (tag: string) =>
      jsonl(Array.from({ length: 60 }, (_, i) => chatLine(`${tag}-${i}`, { max_tokens: 48 })));
    const first = await submitBatch(client, lines('a'));
    await waitForBatch(client, first.id, (b) => b.status === 'in_progress');
    const second = await submitBatch(client, lines('b'));
    await waitForBatch(client, second.id, (b) => (b.request_counts?.completed ?? 0) >= 5);
    const earlier = await client.batches.retrieve(first.id);
    expect(earlier.status).toBe('in_progress');
    expect(earlier.request_counts!.completed).toBeLessThan(60);
    await Promise.all([client.batches.cancel(first.id), client.batches.cancel(second.id)]);
    await Promise.all([waitForBatch(client, first.id), waitForBatch(client, second.id)]);
  });

  it('completes with no duplicate custom_id when a worker is killed mid-batch', async () => {
    const ids = Array.from({ length: 60 }, (_, i) => `k-${i}`);
    const created = await submitBatch(client, jsonl(ids.map((id) => chatLine(id, { max_tokens: 96 }))));
    await waitForBatch(
      client,
      created.id,
      (b) => b.status === 'in_progress' && (b.request_counts?.completed ?? 0) >= 3,
    );
    const victim = platform.workers[0];
    victim.proc.kill('SIGKILL');
    const batch = await waitForBatch(client, created.id, undefined, 60_000);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 60, completed: 60, failed: 0 });
    const out = await fileLines(client, batch.output_file_id);
    expect(out).toHaveLength(60);
    expect(new Set(out.map((l) => l.custom_id)).size).toBe(60);
  });

  describe('files', () => {
    it('lists, retrieves and deletes uploaded files', async () => {
      const { toFile } = await import('openai');
      const file = await client.files.create({
        file: await toFile(Buffer.from(jsonl([chatLine('f')])), 'f.jsonl'),
        purpose: 'batch',
      });
      expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'f.jsonl', bytes: expect.any(Number) });
      expect((await client.files.retrieve(file.id)).id).toBe(file.id);
      expect((await client.files.list()).data.map((f) => f.id)).toContain(file.id);
      expect(await client.files.delete(file.id)).toMatchObject({ id: file.id, deleted: true });
      await expect(client.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
    });

    it('cancels a batch and deletes a file sent with a JSON content type and an empty body, as the Python client does', async () => {
      // The Python openai client sends `content-type: application/json` and no body on bodyless POSTs and DELETEs.
      const bodyless = (method: string, path: string) =>
        fetch(`${platform.baseUrl}${path}`, { method, headers: { 'content-type': 'application/json' }, body: '' });
      const created = await submitBatch(
        client,
        jsonl(Array.from({ length: 100 }, (_, i) => chatLine(`e-${i}`, { max_tokens: 48 }))),
      );
      await waitForBatch(client, created.id, (b) => b.status === 'in_progress');
      const cancel = await bodyless('POST', `/v1/batches/${created.id}/cancel`);
      expect(cancel.status).toBe(200);
      expect(await cancel.json()).toMatchObject({ id: created.id, status: 'cancelling' });
      expect((await waitForBatch(client, created.id)).status).toBe('cancelled');

      const removed = await bodyless('DELETE', `/v1/files/${created.input_file_id}`);
      expect(removed.status).toBe(200);
      expect(await removed.json()).toEqual({ id: created.input_file_id, object: 'file', deleted: true });
      await expect(client.files.retrieve(created.input_file_id)).rejects.toMatchObject({ status: 404 });
    });

    it.each([
      ['a path-traversal id', '..%2F..%2Fetc%2Fpasswd'],
      ['an id of the wrong form', 'file-abc'],
    ])('refuses %s with 400 before touching the store', async (_name, id) => {
      const res = await fetch(`${platform.baseUrl}/v1/files/${id}/content`);
      expect(res.status).toBe(400);
      expect((await readJson<OpenAiErrorBody>(res)).error.code).toBe('invalid_file_id');
    });

    it('refuses a malformed batch id with 400 and an unknown one with 404', async () => {
      expect((await fetch(`${platform.baseUrl}/v1/batches/nope`)).status).toBe(400);
      expect((await fetch(`${platform.baseUrl}/v1/batches/batch_${'0'.repeat(24)}`)).status).toBe(404);
    });
  });
});
