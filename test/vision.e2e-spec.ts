import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { deflateSync, crc32 } from 'node:zlib';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { ensurePresetModel } from '@conveyor/gguf';
import { deploymentQueueName, type QueuedJobData } from '@conveyor/queue';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { freePort } from './support/free-port.js';
import { llamaServerForTests, startLlamaServer, type RunningLlamaServer } from './support/llama-server.js';
import { MODELS_DIR, REDIS_URL, TestPlatform } from './support/platform.js';
import { itPassesEveryCheck, pythonWithOpenAi, runCheckScript, type CheckRun } from './support/python.js';
import { EVENTUALLY_MS } from './support/jobs.js';

const VISION = 'lfm-vision';
const TEXT = 'conveyor-tiny';
const UPSTREAM = 'upstream-chat';
const IMAGE_MAX_BYTES = 64 * 1024;
const SCRIPT = resolve(import.meta.dirname, 'python/vision_client_check.py');
/** Every check the script makes, in the order it prints them. */
const CHECKS = [
  'vision.sync',
  'vision.several_images_before_text',
  'vision.stream',
  'vision.batch',
  'vision.corrupt_image',
  'vision.oversized_image',
  'vision.text_only_deployment_refuses',
];
// Short locks so a dead worker's job is taken over in about a second.
const FAST_FAILOVER = {
  WORKER_LOCK_MS: '1000',
  WORKER_STALLED_INTERVAL_MS: '300',
  WORKER_MAX_STALLS: '1',
  WORKER_SHUTDOWN_GRACE_MS: '300',
};
/** The spec's presets for its 1.6B vision checkpoint, as a deployments file gives them. */
const VISION_DEFAULTS = { temperature: 0.1, min_p: 0.15, repetition_penalty: 1.05 };

const binary = await llamaServerForTests('the vision tests');
const python = pythonWithOpenAi();
const describeWithBoth = binary && python ? describe : describe.skip;
const describeWithServer = binary ? describe : describe.skip;

// A vision deployment as a new user sets one up: a deployments file, the official Python client, 8×8 PNGs.
describeWithBoth('a vision deployment, driven by the official Python client', () => {
  let platform: TestPlatform;
  let run: CheckRun;

  beforeAll(async () => {
    const config = writeDeploymentsFile({
      deployments: [
        { id: VISION, model: 'vision', contextSize: 2048, parallel: 2, threads: 1, defaults: VISION_DEFAULTS },
        { id: TEXT, model: 'tiny', contextSize: 1024, parallel: 1, threads: 1 },
      ],
    });
    platform = await TestPlatform.start({
      env: {
        CONVEYOR_CONFIG: config,
        LLAMA_SERVER_BIN: binary!,
        IMAGE_MAX_BYTES: String(IMAGE_MAX_BYTES),
        DATA_DIR: `/tmp/conveyor-test-data-${process.pid}-vision`,
      },
    });
    run = await runCheckScript(
      python!,
      SCRIPT,
      {
        CONVEYOR_BASE_URL: `${platform.baseUrl}/v1`,
        CONVEYOR_VISION_MODEL: VISION,
        CONVEYOR_TEXT_MODEL: TEXT,
        CONVEYOR_IMAGE_MAX_BYTES: String(IMAGE_MAX_BYTES),
      },
      240_000,
    );
  }, 300_000);

  afterAll(async () => {
    await platform?.stop();
  });

  itPassesEveryCheck('The vision check', CHECKS, () => run);

  it("ran the image requests with the deployment's presets, image references in place of the images", async () => {
    const queue = new Queue<QueuedJobData>(deploymentQueueName(VISION), {
      connection: { url: REDIS_URL },
      prefix: platform.prefix,
    });
    try {
      const jobs = await queue.getJobs(['completed']);
      const withImages = jobs.filter((j) => JSON.stringify(j.data).includes('"sha256"'));
      expect(withImages.length).toBeGreaterThan(3);
      for (const job of withImages) {
        expect(job.data).toMatchObject({ sampling: { temperature: 0.1, minP: 0.15, repeatPenalty: 1.05 } });
        // References, never the image bytes: the job stays small however big its images.
        expect(JSON.stringify(job.data)).not.toContain('base64');
        expect(JSON.stringify(job.data).length).toBeLessThan(8 * 1024);
      }
    } finally {
      await queue.close();
    }
    // Every stored image was released when its job ended.
    const redis = new Redis(REDIS_URL);
    try {
      expect(await redis.keys(`${platform.prefix}:image:*`)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});

/** An 8×8 truecolour PNG, every pixel `rgb`, as a chat image part. */
function imagePart(rgb: [number, number, number]) {
  const chunk = (kind: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(kind, 'latin1'), data]);
    const framed = Buffer.alloc(body.length + 8);
    framed.writeUInt32BE(data.length, 0);
    body.copy(framed, 4);
    framed.writeUInt32BE(crc32(body), body.length + 4);
    return framed;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(8, 0);
  header.writeUInt32BE(8, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.from([0, ...Array.from({ length: 8 }, () => rgb).flat()]);
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(Array.from({ length: 8 }, () => row)))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return { type: 'image_url' as const, image_url: { url: `data:image/png;base64,${png.toString('base64')}` } };
}

// llama.cpp's server keeps a slot's cells up to the longest prefix they share with the next prompt. After
// a prompt with two images side by side, a prompt with the first of them and then text cuts between the
// two, which its multimodal cache takes for a cut inside an image: it fails the request with a 500
// ("Chunk not found"), and again on every retry while the slot holds those cells. The worker sends such
// a request once more without the cache, and counts it.
describeWithServer('a vision deployment on llama-server, images and text in turn', () => {
  const SEQUENCE_MODEL = 'vision-turns';
  let platform: TestPlatform;
  let client: OpenAI;
  let metricsPort: number;

  beforeAll(async () => {
    metricsPort = await freePort();
    const config = writeDeploymentsFile({
      // One slot: every request meets the cells the one before left.
      deployments: [{ id: SEQUENCE_MODEL, model: 'vision', contextSize: 2048, parallel: 1, threads: 1 }],
    });
    platform = await TestPlatform.start({
      env: { CONVEYOR_CONFIG: config, LLAMA_SERVER_BIN: binary!, WORKER_METRICS_PORT: String(metricsPort) },
    });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
  }, 300_000);

  afterAll(async () => {
    await platform?.stop();
  });

  const retries = async (): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith('conveyor_llama_server_uncached_retries_total{') && l.includes(SEQUENCE_MODEL));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  it('answers seven requests of images and text, one of them retried without the prompt cache', async () => {
    const red = imagePart([255, 0, 0]);
    const black = imagePart([0, 0, 0]);
    const blue = imagePart([0, 0, 255]);
    const text = (t: string) => ({ type: 'text' as const, text: t });
    const turns = [
      [red, text('What is in this picture?')],
      [text('And without a picture?')],
      [black, text('What is in this picture?')],
      [red, black, text('Compare the two pictures.')],
      [red, text('again')],
      [blue, red, text('Which is darker?')],
      [red, black, blue, text('Name the colours.')],
    ];
    const before = await retries();
    for (const [i, content] of turns.entries()) {
      const reply = await client.chat.completions.create({
        model: SEQUENCE_MODEL,
        messages: [{ role: 'user', content }],
        max_tokens: 4,
      });
      expect({ turn: i + 1, finish: reply.choices[0]?.finish_reason }).toEqual({
        turn: i + 1,
        finish: expect.stringMatching(/^(stop|length)$/),
      });
    }
    // The fifth request is the one that meets the cut between two images.
    expect(await retries()).toBeGreaterThanOrEqual(before + 1);
  });
});

// `engine: openai`: the deployment's workers drive an OpenAI-compatible server that is already running.
describeWithServer('a deployment on an upstream OpenAI-compatible server (llama-server)', () => {
  let upstream: RunningLlamaServer;
  let platform: TestPlatform;
  let client: OpenAI;

  /** Whether the upstream is generating for any of its slots now. */
  const upstreamBusy = async (): Promise<boolean> => {
    const slots = (await (await fetch(`${upstream.origin}/slots`)).json()) as Array<{ is_processing: boolean }>;
    return slots.some((s) => s.is_processing);
  };

  beforeAll(async () => {
    const model = await ensurePresetModel('tiny', MODELS_DIR);
    upstream = await startLlamaServer(binary!, model, { parallel: 1, contextSize: 2048 });
    const config = writeDeploymentsFile({
      deployments: [{ id: UPSTREAM, engine: 'openai', upstream: { url: upstream.url, model: 'tiny' }, parallel: 1 }],
    });
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config, ...FAST_FAILOVER } });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await upstream?.stop();
  });

  it('answers a chat, synchronous and streamed, through the upstream', async () => {
    const body = { model: UPSTREAM, messages: [{ role: 'user' as const, content: 'Hello!' }], max_tokens: 5 };
    const reply = await client.chat.completions.create({ ...body, ignore_eos: true } as typeof body);
    expect(reply.choices[0]?.finish_reason).toBe('length');
    expect(reply.usage?.completion_tokens).toBe(5);
    expect(reply.usage?.prompt_tokens).toBeGreaterThan(0);

    const stream = await client.chat.completions.create({
      ...body,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true },
    } as typeof body & { stream: true });
    let text = '';
    let roles = 0;
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        if (choice.delta.role) roles++;
        text += choice.delta.content ?? '';
        finish = choice.finish_reason ?? finish;
      }
    }
    expect({ roles, finish, tokens: usage?.completion_tokens }).toEqual({ roles: 1, finish: 'length', tokens: 5 });
    expect(text.length).toBeGreaterThan(0);
  });

  it('aborts the upstream request when the client goes away mid-stream', async () => {
    for (let round = 0; round < 3; round++) {
      const abort = new AbortController();
      const stream = await client.chat.completions.create(
        {
          model: UPSTREAM,
          messages: [{ role: 'user', content: `Tell me a long story, take ${round}.` }],
          max_tokens: 1500,
          stream: true,
          ignore_eos: true,
        } as OpenAI.ChatCompletionCreateParamsStreaming,
        { signal: abort.signal },
      );
      // Leave after a few chunks, at a different point each round, while the upstream is generating.
      let chunks = 0;
      let busyWhenLeaving = false;
      try {
        for await (const chunk of stream) {
          // Chunks already on their way still arrive after the abort; the first decides.
          if (chunk.choices[0]?.delta.content && ++chunks > 2 + round * 5 && !abort.signal.aborted) {
            busyWhenLeaving = await upstreamBusy();
            abort.abort();
          }
        }
      } catch (err) {
        if (!abort.signal.aborted) throw err;
      }
      expect(busyWhenLeaving).toBe(true);
      const left = Date.now();
      while (await upstreamBusy()) {
        if (Date.now() - left > EVENTUALLY_MS) throw new Error('the upstream kept generating after the client left');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    // And the deployment still serves.
    const after = await client.chat.completions.create({
      model: UPSTREAM,
      messages: [{ role: 'user', content: 'Still there?' }],
      max_tokens: 3,
    });
    expect(after.choices[0]?.message.role).toBe('assistant');
  });

  it('continues a reply whose worker is killed mid-stream, on another worker, through the upstream', async () => {
    // Replies may reach the client with several tokens to a chunk, so the kill points are counted in
    // chunks a 400-token reply always has.
    for (const killAfter of [1, 3, 6]) {
      const victim = platform.workers.at(-1)!;
      const stream = await client.chat.completions.create({
        model: UPSTREAM,
        messages: [{ role: 'user', content: `Count to a hundred, round ${killAfter}.` }],
        max_tokens: 400,
        stream: true,
        stream_options: { include_usage: true },
        ignore_eos: true,
      } as OpenAI.ChatCompletionCreateParamsStreaming);
      let chunks = 0;
      let roles = 0;
      let finish: string | null | undefined;
      let usage: OpenAI.CompletionUsage | undefined;
      let successor: Promise<unknown> | undefined;
      for await (const chunk of stream) {
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices[0];
        if (choice?.delta.role) roles++;
        finish = choice?.finish_reason ?? finish;
        if (choice?.delta.content && ++chunks === killAfter) {
          victim.proc.kill('SIGKILL');
          // The job waits for a worker: the next one takes it over once the dead one's lock lapses.
          successor = platform.startWorker();
        }
      }
      await successor;
      expect({ chunks, killed: victim.proc.signalCode }).toEqual({ chunks: expect.any(Number), killed: 'SIGKILL' });
      // One well-formed reply: one role chunk, and the budget counted once across both workers.
      expect({ roles, finish, tokens: usage?.completion_tokens }).toEqual({ roles: 1, finish: 'length', tokens: 400 });
    }
  });
});
