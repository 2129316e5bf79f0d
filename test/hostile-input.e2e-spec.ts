import fc from 'fast-check';
import { Queue } from 'bullmq';
import type { OpenAiErrorBody } from '@conveyor/openai';
import { deploymentQueueName } from '@conveyor/queue';
import { readJson } from './support/json.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';

const MODEL = 'conveyor-tiny';
const valid = () => ({ model: MODEL, messages: [{ role: 'user', content: 'hello' }], max_tokens: 4 });

// Values no field of the chat body accepts where they are put below.
const junk = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: false }),
  fc.string(),
  fc.constant({}),
  fc.constant([]),
  fc.array(fc.anything(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.anything(), { maxKeys: 3 }),
);
const loneSurrogate = fc.constantFrom('\uD800', 'abc\uDFFF', '\uDBFFx');
const huge = fc.constantFrom(1e308, -1e308, 2 ** 64, Number.MAX_SAFE_INTEGER * 8);

/** A chat body as JSON, before and after a mutation. */
type Body = Record<string, unknown>;
/** Makes a body invalid: another object, or raw text for what JSON.stringify cannot write. */
type Mutation = (body: Body) => Body | string;

/** Mutations that each make a valid body invalid, whatever else they leave alone. */
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  junk.filter((v) => typeof v !== 'string' || v.length === 0).map((v) => (b: Body) => ({ ...b, model: v })),
  junk
    .filter((v) => !Array.isArray(v) || v.length === 0 || v.some((x) => typeof x !== 'object' || x === null))
    .map((v) => (b: Body) => ({ ...b, messages: v })),
  junk
    .filter((v) => typeof v !== 'string' && !Array.isArray(v))
    .map((v) => (b: Body) => ({ ...b, messages: [{ role: 'user', content: v }] })),
  fc
    .string()
    .filter((r) => !['system', 'developer', 'user', 'assistant'].includes(r))
    .map((r) => (b: Body) => ({ ...b, messages: [{ role: r, content: 'x' }] })),
  loneSurrogate.map((t) => (b: Body) => ({ ...b, messages: [{ role: 'user', content: t }] })),
  loneSurrogate.map((t) => (b: Body) => ({ ...b, stop: [t] })),
  huge.map((n) => (b: Body) => ({ ...b, max_tokens: n })),
  huge.map((n) => (b: Body) => ({ ...b, temperature: n })),
  fc
    .constantFrom('top_k', 'min_p', 'top_p', 'seed', 'repetition_penalty', 'presence_penalty')
    .chain((field) =>
      fc.oneof(fc.string(), fc.constant({}), fc.constant([1]), huge).map((v) => (b: Body) => ({ ...b, [field]: v })),
    ),
  fc
    .integer({ min: 50, max: 3000 })
    .map((depth) => (b: Body) => JSON.stringify(b).replace('"hello"', `${'['.repeat(depth)}${']'.repeat(depth)}`)),
  fc.constant((b: Body) => JSON.stringify(b).replace('{', '{"__proto__":{"polluted":true},')),
  fc.constant((b: Body) => JSON.stringify(b).replace('"user"', '"user","constructor":{"prototype":{"x":1}}')),
  fc.integer({ min: 4097, max: 6000 }).map((n) => (b: Body) => ({
    ...b,
    messages: Array.from({ length: n }, () => ({ role: 'user', content: 'x' })),
  })),
  fc.constant((b: Body) => JSON.stringify(b).slice(0, -3)),
  fc.constant((b: Body) => ({ ...b, model: 'no-such-model' })),
);

describe('hostile input: always a 4xx in OpenAI shape, never a 5xx or a crash, nothing queued', () => {
  let platform: TestPlatform;
  let queue: Queue;

  beforeAll(async () => {
    platform = await TestPlatform.start({ workers: 0 });
    queue = new Queue(deploymentQueueName(MODEL), { connection: { url: REDIS_URL }, prefix: platform.prefix });
  });

  afterAll(async () => {
    await queue?.close();
    await platform?.stop();
  });

  it('survives 300 property-based mutations of the chat body', async () => {
    await fc.assert(
      fc.asyncProperty(mutation, async (mutate) => {
        const body = mutate(valid());
        const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        });
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        const json = await readJson<OpenAiErrorBody>(res);
        expect(Object.keys(json)).toEqual(['error']);
        expect(Object.keys(json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
        expect(typeof json.error.message).toBe('string');
      }),
      { numRuns: 300, seed: 20261122 },
    );
    expect(await queue.count()).toBe(0);
    expect(Object.values(await queue.getJobCounts()).reduce((a, b) => a + b, 0)).toBe(0);
    expect((await fetch(`${platform.baseUrl}/health`)).status).toBe(200);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses an image URL that is not a data: URI, without fetching it', async () => {
    const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        messages: [
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'http://169.254.169.254/latest/meta-data' } }],
          },
        ],
      }),
    });
    expect(res.status).toBe(400);
    expect((await readJson<OpenAiErrorBody>(res)).error).toMatchObject({
      code: 'invalid_image_url',
      param: 'messages[0].content[0].image_url.url',
    });
  });
});
