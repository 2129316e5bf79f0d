import OpenAI, { toFile } from 'openai';
import type { EmbeddingList } from '@conveyor/openai';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { fileLines, waitForBatch } from './support/batches.js';
import { TestPlatform } from './support/platform.js';

const EMBED = 'conveyor-embed';
const CHAT = 'conveyor-tiny';
/** The tiny preset's embedding width. */
const WIDTH = 128;

const config = writeDeploymentsFile({
  deployments: [
    {
      id: EMBED,
      model: 'tiny',
      task: 'embeddings',
      contextSize: 512,
      parallel: 2,
      threads: 1,
      alias: { org: 'acme', app: 'vectors' },
      auth: 'public',
    },
    { id: CHAT, model: 'tiny', contextSize: 512, parallel: 1, threads: 1 },
  ],
});

const decode = (b64: string): Float32Array => {
  const bytes = Buffer.from(b64, 'base64');
  return Float32Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
};

describe('embeddings end to end (API → BullMQ → worker embedding context → client)', () => {
  let platform: TestPlatform;
  let client: OpenAI;

  const post = (body: unknown, path = '/v1/embeddings') =>
    fetch(`${platform.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  const floats = async (input: OpenAI.EmbeddingCreateParams['input']) =>
    (await client.embeddings.create({ model: EMBED, input, encoding_format: 'float' })).data.map((d) => d.embedding);

  async function refused(body: Record<string, unknown>) {
    const res = await post({ model: EMBED, ...body });
    expect(res.status).toBe(400);
    return (
      (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } }
    ).error;
  }

  beforeAll(async () => {
    platform = await TestPlatform.start({
      env: { CONVEYOR_CONFIG: config, DATA_DIR: `/tmp/conveyor-test-data-${process.pid}` },
    });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused' });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('embeds one string as one finite, unit-length vector of the model width, in OpenAI list shape', async () => {
    const res = await client.embeddings.create({
      model: EMBED,
      input: 'Embed me through the queue.',
      encoding_format: 'float',
    });
    expect(res).toMatchObject({ object: 'list', model: EMBED, data: [{ object: 'embedding', index: 0 }] });
    const [vector] = res.data.map((d) => d.embedding);
    expect(vector).toHaveLength(WIDTH);
    expect(vector.every(Number.isFinite)).toBe(true);
    expect(Math.hypot(...vector)).toBeCloseTo(1, 4);
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
    expect(res.usage.total_tokens).toBe(res.usage.prompt_tokens);
  });

  it('embeds a list in order, the same text always to the same vector', async () => {
    const res = await client.embeddings.create({
      model: EMBED,
      input: ['alpha', 'beta', 'alpha'],
      encoding_format: 'float',
    });
    expect(res.data.map((d) => d.index)).toEqual([0, 1, 2]);
    const [a, b, again] = res.data.map((d) => d.embedding);
    expect(again).toEqual(a);
    expect(b).not.toEqual(a);
    expect(await floats('beta')).toEqual([b]);
  });

  it('sends base64 as the little-endian float32 bytes of the float answer', async () => {
    const [expected] = await floats('same vector either way');
    const res = await post({ model: EMBED, input: 'same vector either way', encoding_format: 'base64' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: Array<{ embedding: string }> };
    expect(typeof body.data[0].embedding).toBe('string');
    expect(decode(body.data[0].embedding)).toEqual(Float32Array.from(expected));
    // The official client asks for base64 when no format is given, and decodes it itself.
    const viaClient = await client.embeddings.create({ model: EMBED, input: 'same vector either way' });
    expect(Float32Array.from(viaClient.data[0].embedding)).toEqual(Float32Array.from(expected));
  });

  it('embeds token-id input, one list or several', async () => {
    const [one] = await floats([104, 101, 108, 108, 111]);
    expect(one).toHaveLength(WIDTH);
    const several = await floats([
      [104, 101, 108, 108, 111],
      [1, 2, 3],
    ]);
    expect(several[0]).toEqual(one);
    expect(several[1]).toHaveLength(WIDTH);
  });

  it('refuses bad input with OpenAI-shaped 400s naming the field, never a 500', async () => {
    for (const input of [[], '', ['ok', ''], Array.from({ length: 2049 }, () => 'x'), [1, 'a'], null]) {
      expect(await refused({ input })).toMatchObject({ type: 'invalid_request_error', param: 'input' });
    }
    expect(await refused({ input: 'x', dimensions: 64 })).toMatchObject({
      param: 'dimensions',
      code: 'unsupported_parameter',
    });
    expect(await refused({ input: [[5, 999_999]] })).toMatchObject({
      code: 'invalid_value',
      message: expect.stringMatching(/token id/),
    });
    expect(await refused({ input: 'word '.repeat(400) })).toMatchObject({ code: 'context_length_exceeded' });
    expect(await refused({ input: 'x', encoding_format: 'int8' })).toMatchObject({ param: 'encoding_format' });
    // The model's own width is what it makes anyway.
    expect((await post({ model: EMBED, input: 'x', dimensions: WIDTH })).status).toBe(200);
  });

  it('refuses a chat deployment asked for embeddings', async () => {
    expect(await refused({ model: CHAT, input: 'hello' })).toEqual({
      message: `The model '${CHAT}' does not serve embeddings.`,
      type: 'invalid_request_error',
      param: 'model',
      code: 'model_not_supported',
    });
  });

  it('serves the org/app form of the route', async () => {
    const res = await post({ model: EMBED, input: ['a', 'b'] }, '/acme/vectors/v1/embeddings');
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(2);
  });

  it('runs /v1/embeddings as a batch endpoint, each output line holding the float vectors', async () => {
    const line = (customId: string, input: unknown, extra: Record<string, unknown> = {}) =>
      JSON.stringify({
        custom_id: customId,
        method: 'POST',
        url: '/v1/embeddings',
        body: { model: EMBED, input, ...extra },
      });
    const submit = async (lines: string[]) => {
      const file = await client.files.create({
        file: await toFile(Buffer.from(lines.join('\n') + '\n'), 'embed.jsonl'),
        purpose: 'batch',
      });
      return waitForBatch(
        client,
        (await client.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h' }))
          .id,
      );
    };

    const batch = await submit([line('one', 'alpha'), line('two', ['alpha', 'beta']), line('ids', [104, 101])]);
    expect(batch).toMatchObject({
      status: 'completed',
      endpoint: '/v1/embeddings',
      request_counts: { total: 3, completed: 3, failed: 0 },
    });
    const out = new Map((await fileLines<EmbeddingList>(client, batch.output_file_id)).map((l) => [l.custom_id, l]));
    expect([...out.keys()].sort()).toEqual(['ids', 'one', 'two']);
    const [alpha] = await floats('alpha');
    expect(out.get('one')).toMatchObject({
      response: { status_code: 200, body: { object: 'list', model: EMBED, data: [{ index: 0, embedding: alpha }] } },
      error: null,
    });
    expect(out.get('two')!.response!.body.data.map((d) => d.embedding.length)).toEqual([WIDTH, WIDTH]);
    expect(out.get('ids')!.response!.body.usage.prompt_tokens).toBeGreaterThan(0);

    // An output line is made from the worker's result alone, so a line cannot ask for base64.
    const refusedBatch = await submit([
      line('b64', 'alpha', { encoding_format: 'base64' }),
      line('chat', 'x', { model: CHAT }),
    ]);
    expect(refusedBatch.status).toBe('failed');
    expect(refusedBatch.errors!.data!.map((e) => [e.line, e.code, e.param])).toEqual([
      [1, 'unsupported_parameter', 'body.encoding_format'],
      [2, 'model_not_supported', 'body.model'],
    ]);
  });
});
