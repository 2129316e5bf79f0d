import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import OpenAI, { toFile } from 'openai';
import type { OpenAiErrorBody } from '@conveyor/openai';
import { chatLine, fileLines, jsonl, waitForBatch } from './support/batches.js';
import { readJson } from './support/json.js';
import { TestPlatform } from './support/platform.js';
import { TestS3 } from './support/s3-server.js';

const client = (baseUrl: string) => new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: 'unused' });

async function upload(api: OpenAI, content: string): Promise<OpenAI.Files.FileObject> {
  return api.files.create({ file: await toFile(Buffer.from(content), 'input.jsonl'), purpose: 'batch' });
}

/** `GET /v1/files/{id}/content`, with a Range header when given. */
function content(baseUrl: string, id: string, range?: string): Promise<Response> {
  return fetch(`${baseUrl}/v1/files/${id}/content`, { headers: range ? { Range: range } : {} });
}

/** A file's content answers whole (200) and by Range (206, 416), as any HTTP client expects. */
async function expectRanges(baseUrl: string, id: string, whole: string): Promise<void> {
  const size = Buffer.byteLength(whole);
  const all = await content(baseUrl, id);
  expect(all.status).toBe(200);
  expect(all.headers.get('accept-ranges')).toBe('bytes');
  expect(await all.text()).toBe(whole);

  const part = await content(baseUrl, id, `bytes=5-${size - 6}`);
  expect(part.status).toBe(206);
  expect(part.headers.get('content-range')).toBe(`bytes 5-${size - 6}/${size}`);
  expect(part.headers.get('content-length')).toBe(String(size - 10));
  expect(await part.text()).toBe(
    Buffer.from(whole)
      .subarray(5, size - 5)
      .toString(),
  );

  const tail = await content(baseUrl, id, 'bytes=-4');
  expect(tail.status).toBe(206);
  expect(await tail.text()).toBe(
    Buffer.from(whole)
      .subarray(size - 4)
      .toString(),
  );

  const past = await content(baseUrl, id, `bytes=${size}-`);
  expect(past.status).toBe(416);
  expect(past.headers.get('content-range')).toBe(`bytes */${size}`);
  expect((await readJson<OpenAiErrorBody>(past)).error.code).toBe('range_not_satisfiable');
}

describe('files shared by two API replicas through S3-compatible storage', () => {
  let s3: TestS3;
  let platform: TestPlatform;
  let first: OpenAI;
  let second: OpenAI;
  let secondUrl: string;
  const prefix = `e2e-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    s3 = await TestS3.start();
    // A small window: the output is written over several ticks, so as several parts.
    platform = await TestPlatform.start({ env: { ...s3.env(prefix), BATCH_TICK_MS: '50', BATCH_INFLIGHT: '4' } });
    secondUrl = (await platform.startExtraApi()).baseUrl;
    first = client(platform.baseUrl);
    second = client(secondUrl);
  });

  afterAll(async () => {
    await platform?.stop();
    await s3?.stop();
  });

  it('lists, reads (whole and by range) and deletes through one replica a file uploaded through the other', async () => {
    const text = jsonl(Array.from({ length: 5 }, (_, i) => chatLine(`r-${i}`)));
    const file = await upload(first, text);
    expect(file.bytes).toBe(Buffer.byteLength(text));

    expect((await second.files.list()).data.map((f) => f.id)).toContain(file.id);
    expect(await second.files.retrieve(file.id)).toMatchObject({ id: file.id, bytes: file.bytes, purpose: 'batch' });
    await expectRanges(secondUrl, file.id, text);

    expect(await second.files.delete(file.id)).toMatchObject({ id: file.id, deleted: true });
    await expect(first.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
    expect((await content(platform.baseUrl, file.id)).status).toBe(404);
  });

  it('runs a batch created through one replica over a file uploaded through the other; both serve its output', async () => {
    const ids = Array.from({ length: 24 }, (_, i) => `b-${i}`);
    const input = await upload(first, jsonl(ids.map((id) => chatLine(id))));
    const created = await second.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const batch = await waitForBatch(first, created.id, (b) => b.status === 'completed', 20_000);
    expect(batch.request_counts).toEqual({ total: 24, completed: 24, failed: 0 });

    const fromFirst = await fileLines(first, batch.output_file_id);
    expect(fromFirst.map((l) => l.custom_id).sort()).toEqual([...ids].sort());
    expect(await fileLines(second, batch.output_file_id)).toEqual(fromFirst);
    // The output is written in parts as lines finish: a range reads across them.
    expect((await s3.keys(`${prefix}/files/${batch.output_file_id}/parts/`)).length).toBeGreaterThan(1);
    const whole = await (await content(secondUrl, batch.output_file_id!)).text();
    await expectRanges(platform.baseUrl, batch.output_file_id!, whole);
  });

  it('refuses to start a replica on another store than the one its Redis prefix uses', async () => {
    await expect(platform.startExtraApi({ FILE_STORE: `s3://${TestS3.bucket}/${prefix}-elsewhere` })).rejects.toThrow(
      /exited with 1:[\s\S]*Another file store is in use by API replicas running now on the Redis prefix/,
    );
  });
});

describe('the local file store', () => {
  const dataDir = `/tmp/conveyor-test-shared-files-${process.pid}`;
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await TestPlatform.start({ workers: 0, env: { DATA_DIR: dataDir } });
  });

  afterAll(async () => {
    await platform?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers Range requests for a file's content too", async () => {
    const text = jsonl(Array.from({ length: 3 }, (_, i) => chatLine(`l-${i}`)));
    const file = await upload(client(platform.baseUrl), text);
    await expectRanges(platform.baseUrl, file.id, text);
  });
});
