import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import type { OpenAiErrorBody } from '@conveyor/openai';
import { deploymentQueueName } from '@conveyor/queue';
import { chatLine, jsonl, submitBatch, waitForBatch } from './support/batches.js';
import { readJson } from './support/json.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';

const MODEL = 'conveyor-tiny';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
/** The image cap these tests run with: small, so an oversized image is quick to send. */
const IMAGE_MAX_BYTES = 64 * 1024;

const imagePart = (base64: string) => ({ type: 'image_url', image_url: { url: `data:image/png;base64,${base64}` } });

/**
 * Image input through the real API: refusals happen before anything is queued, whatever route or batch
 * the request comes by. The default deployment (the tiny model) reads text only.
 */
describe('image input', () => {
  let platform: TestPlatform;
  let queue: Queue;
  let client: OpenAI;

  beforeAll(async () => {
    platform = await TestPlatform.start({ workers: 0, env: { IMAGE_MAX_BYTES: String(IMAGE_MAX_BYTES) } });
    queue = new Queue(deploymentQueueName(MODEL), { connection: { url: REDIS_URL }, prefix: platform.prefix });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
  });

  afterAll(async () => {
    await queue?.close();
    await platform?.stop();
  });

  const post = (path: string, body: unknown) =>
    fetch(`${platform.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  const queued = async () => Object.values(await queue.getJobCounts()).reduce((a, b) => a + b, 0);

  it('refuses an image for a deployment that reads text only with 400 naming the part, on every chat route', async () => {
    const body = {
      model: MODEL,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is it?' }, imagePart(PNG)] }],
    };
    for (const path of ['/v1/chat/completions', '/environments/production/predict']) {
      const res = await post(path, body);
      expect(res.status).toBe(400);
      expect((await readJson<OpenAiErrorBody>(res)).error).toMatchObject({
        type: 'invalid_request_error',
        code: 'model_not_supported',
        param: 'messages[0].content[1].type',
      });
    }
    expect(await queued()).toBe(0);
  });

  it('refuses an image over IMAGE_MAX_BYTES with 413 naming the part, before anything is queued', async () => {
    const oversized = Buffer.alloc(IMAGE_MAX_BYTES + 1, 1).toString('base64');
    const res = await post('/v1/chat/completions', {
      model: MODEL,
      messages: [{ role: 'user', content: [imagePart(PNG), imagePart(oversized)] }],
    });
    expect(res.status).toBe(413);
    const { error } = await readJson<OpenAiErrorBody>(res);
    expect(error).toMatchObject({
      type: 'invalid_request_error',
      code: 'image_too_large',
      param: 'messages[0].content[1].image_url.url',
    });
    expect(error.message).toContain(`${IMAGE_MAX_BYTES + 1} bytes`);
    expect(await queued()).toBe(0);
    // Nothing of the request's images reached Redis either.
    const redis = new Redis(REDIS_URL);
    expect(await redis.keys(`${platform.prefix}:image:*`)).toEqual([]);
    redis.disconnect();
  });

  it('lists each batch line with an image the deployment cannot read, and runs none of them', async () => {
    const batch = await submitBatch(
      client,
      jsonl([
        chatLine('text', {}),
        chatLine('picture', { messages: [{ role: 'user', content: [imagePart(PNG)] }] }),
        chatLine('too-big', {
          messages: [{ role: 'user', content: [imagePart(Buffer.alloc(IMAGE_MAX_BYTES + 1).toString('base64'))] }],
        }),
      ]),
    );
    const done = await waitForBatch(client, batch.id);
    expect(done.status).toBe('failed');
    expect(done.errors?.data?.map((e) => [e.line, e.code, e.param])).toEqual([
      [2, 'model_not_supported', 'body.messages[0].content[0].type'],
      [3, 'image_too_large', 'body.messages[0].content[0].image_url.url'],
    ]);
    expect(await queued()).toBe(0);
  });
});
