import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import OpenAI, { toFile } from 'openai';
import { fileExpiriesKey } from '@conveyor/queue';
import { chatLine, jsonl, waitForBatch } from './support/batches.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';

const DATA_DIR = `/tmp/conveyor-test-file-expiry-${process.pid}`;
const storedAt = (id: string) => join(DATA_DIR, 'files', id);

describe('files past their expiry are removed and answer 404, from a batch (output_expires_after) or an upload', () => {
  let platform: TestPlatform;
  let client: OpenAI;
  let redis: Redis;

  beforeAll(async () => {
    platform = await TestPlatform.start({
      env: {
        DATA_DIR,
        BATCH_TICK_MS: '50',
        // Test-only: expiries of seconds, where OpenAI's API (and the default) takes an hour at least.
        BATCH_OUTPUT_EXPIRY_MIN_S: '1',
        FILE_EXPIRY_SWEEP_MS: '200',
      },
    });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
    redis = new Redis(REDIS_URL);
  }, 120_000);

  afterAll(async () => {
    redis?.disconnect();
    await platform?.stop();
    rmSync(DATA_DIR, { recursive: true, force: true });
  });

  const upload = async (content: string, seconds?: number) =>
    client.files.create({
      file: await toFile(Buffer.from(content), 'input.jsonl'),
      purpose: 'batch',
      ...(seconds ? { expires_after: { anchor: 'created_at' as const, seconds } } : {}),
    });

  /** Until the file answers 404 to every route of the Files API; the time it took. */
  async function untilGone(id: string): Promise<void> {
    for (const until = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 100))) {
      const status = await client.files.retrieve(id).then(
        () => 200,
        (err: InstanceType<typeof OpenAI.APIError>) => err.status,
      );
      if (status === 404) return;
      if (Date.now() > until) throw new Error(`${id} still there`);
    }
  }

  async function expectGone(id: string): Promise<void> {
    const err = await client.files.content(id).catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    // As a deleted file answers.
    expect(err).toMatchObject({ status: 404, error: { type: 'not_found_error' } });
    expect((await client.files.list()).data.map((f) => f.id)).not.toContain(id);
    // Removed from the store by the sweeper, and from the set of files it watches.
    for (const until = Date.now() + 10_000; existsSync(storedAt(id)) && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(existsSync(storedAt(id))).toBe(false);
    expect(await redis.zscore(fileExpiriesKey(platform.prefix), id)).toBeNull();
  }

  it("a batch's output file expires output_expires_after.seconds after the batch ends, then is gone", async () => {
    const input = await upload(jsonl([chatLine('a'), chatLine('b')]));
    const batch = await client.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      output_expires_after: { anchor: 'created_at', seconds: 3 },
    });
    const done = await waitForBatch(client, batch.id);
    expect(done.status).toBe('completed');
    const output = await client.files.retrieve(done.output_file_id!);
    expect(output.expires_at).toBe(done.completed_at! + 3);
    expect((await (await client.files.content(output.id)).text()).split('\n').filter(Boolean)).toHaveLength(2);
    // The input has no expiry of its own: it stays.
    expect((await client.files.retrieve(input.id)).expires_at).toBeNull();
    await untilGone(output.id);
    expect(Date.now() / 1000).toBeGreaterThanOrEqual(output.expires_at!);
    await expectGone(output.id);
    expect(existsSync(storedAt(input.id))).toBe(true);
  });

  it('an upload with expires_after expires that long after it was created, then is gone', async () => {
    const file = await upload(jsonl([chatLine('a')]), 2);
    expect(file.expires_at).toBe(file.created_at + 2);
    expect((await client.files.retrieve(file.id)).expires_at).toBe(file.created_at + 2);
    await untilGone(file.id);
    await expectGone(file.id);
  });

  it.each([
    [{ anchor: 'last_active_at', seconds: 60 }, 'output_expires_after.anchor must be "created_at"'],
    [{ anchor: 'created_at', seconds: 2_592_001 }, 'output_expires_after.seconds must be a whole number'],
    ['3600', 'output_expires_after must be an object'],
  ])('refuses output_expires_after %j with a 400 in OpenAI shape', async (value, message) => {
    const input = await upload(jsonl([chatLine('a')]));
    const res = await fetch(`${platform.baseUrl}/v1/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        output_expires_after: value,
      }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; type: string; param: string } };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', param: 'output_expires_after' });
    expect(body.error.message).toContain(message);
  });

  it('refuses an upload whose expires_after is out of range, keeping nothing of it', async () => {
    const before = (await client.files.list()).data.length;
    const err = await upload('{}', 2_592_001).catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect(err).toMatchObject({ status: 400, error: { param: 'expires_after', type: 'invalid_request_error' } });
    expect((await client.files.list()).data.length).toBe(before);
  });
});
