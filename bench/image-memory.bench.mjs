#!/usr/bin/env node
// Redis memory that image requests take, stored by hash beside their jobs as the API does, against
// what base64 in the job data would have taken. Runs on a redis-server of its own, on a free loopback
// port, so that nobody else's keys count.
//   node bench/image-memory.bench.mjs [--requests 100] [--lines 1000] [--image-bytes 1000000] [--window 16] [--line-ms 100]
//
// Until a vision engine lands, no worker can run an image job, so this drives the API's own pieces in
// process, from dist/ (npm run build first): the chat body's validation (which decodes each image and
// reads its header), the image store, and the BullMQ queue adapter with its retention settings, on a
// deployment marked as reading images. A stand-in worker takes the jobs off the queue and ends each as
// the worker's processor does once a reply is published: it releases the job's images with the
// worker's own adapter, and completes the job. The batch part feeds lines as the batch runner does:
// at most --window lines (BATCH_INFLIGHT) queued or running, each line's images stored as it is queued;
// its stand-in worker runs 4 lines at once and takes --line-ms over each, as a generation would, so
// that the window fills as it does in front of real workers.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseCli, positiveInt } from './lib/cli.mjs';
import { freePort } from './lib/processes.mjs';

/** @import { ChildProcess } from 'node:child_process' */
/** @import { Redis as RedisClient } from 'ioredis' */
/** @import { Job, Worker as BullWorker } from 'bullmq' */
/** @import { PlatformConfig } from '../libs/config/src/index.js' */
/** @import { GenerationJobData, JobResult, QueuedJobData } from '../libs/queue/src/index.js' */
/** @import { ChatCompletionRequestDto, CheckedGeneration, DecodedImage } from '../libs/protocol/src/index.js' */

const USAGE =
  'usage: node bench/image-memory.bench.mjs [--requests 100] [--lines 1000] [--image-bytes 1000000] [--window 16] [--line-ms 100]';
const values = parseCli(USAGE, {
  requests: { type: 'string', default: '100' },
  lines: { type: 'string', default: '1000' },
  'image-bytes': { type: 'string', default: '1000000' },
  window: { type: 'string', default: '16' },
  'line-ms': { type: 'string', default: '100' },
});
const REQUESTS = positiveInt('--requests', values.requests);
const LINES = positiveInt('--lines', values.lines);
const IMAGE_BYTES = positiveInt('--image-bytes', values['image-bytes']);
const WINDOW = positiveInt('--window', values.window);
const LINE_MS = positiveInt('--line-ms', values['line-ms']);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** @param {string} path */
const importDist = (path) => import(pathToFileURL(resolve(ROOT, 'dist', path)).href);

/** @type {typeof import('../libs/config/src/index.js')} */
const { loadConfig } = await importDist('libs/config/src/index.js');
/** @type {typeof import('../libs/queue/src/index.js')} */
const { batchLineJobId, deploymentQueueName, jobImageHashes } = await importDist('libs/queue/src/index.js');
/** @type {typeof import('../libs/protocol/src/index.js')} */
const {
  ChatCompletionRequestDto: RequestDto,
  checkGeneration,
  validateDto,
} = await importDist('libs/protocol/src/index.js');
/** @type {typeof import('../apps/api/src/repositories/image.repository.js')} */
const { ImageRepository } = await importDist('apps/api/src/repositories/image.repository.js');
/** @type {typeof import('../apps/api/src/generation/bullmq-job-queue.adapter.js')} */
const { BullMqJobQueue } = await importDist('apps/api/src/generation/bullmq-job-queue.adapter.js');
/** @type {typeof import('../apps/api/src/repositories/api-redis.js')} */
const { apiRedis } = await importDist('apps/api/src/repositories/api-redis.js');
/** @type {typeof import('../apps/worker/src/worker-redis.js')} */
const { workerRedis } = await importDist('apps/worker/src/worker-redis.js');
/** @type {typeof import('../apps/worker/src/images/redis-image.releaser.js')} */
const { RedisImageReleaser } = await importDist('apps/worker/src/images/redis-image.releaser.js');
const { Worker } = await import('bullmq');
const { Redis } = await import('ioredis');

const MB = 1_000_000;
const mb = (/** @type {number} */ bytes) => `${(bytes / MB).toFixed(1)} MB`;

/**
 * A PNG of `bytes` bytes, distinct from every other one: a real header (1024×1024) and random data after
 * it. Validation reads the header and hashes the whole, as it would a photo.
 * @param {number} bytes
 */
function distinctPng(bytes) {
  const png = randomBytes(bytes);
  Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').copy(png, 0);
  png.writeUInt32BE(1024, 16);
  png.writeUInt32BE(1024, 20);
  return png;
}

/** @param {Buffer} png */
const chatBody = (png) => ({
  model: 'vision-bench',
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
      ],
    },
  ],
  max_tokens: 16,
});

/** @param {RedisClient} redis */
async function usedMemory(redis) {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
}

/**
 * A redis-server of this run's own, with nothing else in it and nothing written to disk.
 * @returns {Promise<{ url: string, proc: ChildProcess }>}
 */
async function startRedis() {
  const port = await freePort();
  const proc = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const probe = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    probe.on('error', () => undefined);
    const ok = await probe.connect().then(
      () => probe.ping(),
      () => null,
    );
    probe.disconnect();
    if (ok === 'PONG') return { url, proc };
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill('SIGKILL');
  throw new Error('redis-server did not start');
}

const redisServer = await startRedis();
const redis = new Redis(redisServer.url);
const prefix = `bench-${randomBytes(4).toString('hex')}`;
const base = loadConfig({ REDIS_URL: redisServer.url, REDIS_PREFIX: prefix, MODEL: 'tiny', MODEL_ID: 'vision-bench' });
/** @type {PlatformConfig} */
const config = { ...base, deployments: [{ ...base.deployments[0], vision: true }] };
const deployment = config.deployments[0];
const apiConnection = apiRedis(config);
const workerConnection = workerRedis(config);
const queue = new BullMqJobQueue(config, apiConnection);
const images = new ImageRepository(config, apiConnection);
const releaser = new RedisImageReleaser(config, workerConnection);
const queueName = deploymentQueueName(deployment.id);

/**
 * What the API does with a chat body before its job is queued: validate it, decode and check its images.
 * @param {unknown} body
 * @returns {{ dto: ChatCompletionRequestDto, generation: CheckedGeneration }}
 */
function checked(body) {
  const parsed = validateDto(RequestDto, body);
  if (!parsed.ok) throw new Error(parsed.problem.message);
  /** @type {ChatCompletionRequestDto} */
  const dto = parsed.value;
  return { dto, generation: checkGeneration(dto, deployment, config.api.images) };
}

/**
 * The job as it would be if it carried its images: each image part's data: URI in the turn.
 * @param {GenerationJobData} job
 * @param {ChatCompletionRequestDto} dto
 * @returns {GenerationJobData}
 */
function withInlineImages(job, dto) {
  const urls = dto.messages.flatMap((m) =>
    Array.isArray(m.content) ? m.content.flatMap((p) => (p.type === 'image_url' ? [p.image_url.url] : [])) : [],
  );
  return { ...job, messages: job.messages.map((m) => ({ role: m.role, content: m.content, images: urls })) };
}

/**
 * A stand-in worker: takes each job, releases its images as the processor does at a job's end, completes it.
 * @param {number} concurrency
 * @param {number} [runMs] how long each job takes, as its generation would
 * @returns {{ worker: BullWorker, done: () => number }}
 */
function standInWorker(concurrency, runMs = 0) {
  let done = 0;
  const worker = new Worker(
    queueName,
    /**
     * @param {Job<QueuedJobData, JobResult>} job
     * @returns {Promise<JobResult>}
     */
    async (job) => {
      if (runMs) await new Promise((r) => setTimeout(r, runMs));
      const held = jobImageHashes(job.data);
      if (held.length) await releaser.release(job.data.requestId, held);
      done++;
      return { finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1 } };
    },
    { connection: { url: redisServer.url }, prefix, concurrency },
  );
  return { worker, done: () => done };
}

/** @param {() => boolean} ready */
async function until(ready) {
  while (!ready()) await new Promise((r) => setTimeout(r, 20));
}

/** Removes every key of this run, and waits for Redis to give the memory back. */
async function clean() {
  await redis.flushdb();
  await new Promise((r) => setTimeout(r, 200));
}

/**
 * (a) Interactive requests, each with a distinct image: queued, then finished (kept JOB_RETENTION_SECONDS).
 * @param {boolean} inline
 */
async function requests(inline) {
  await clean();
  const before = await usedMemory(redis);
  for (let i = 0; i < REQUESTS; i++) {
    const { dto, generation } = checked(chatBody(distinctPng(IMAGE_BYTES)));
    const requestId = randomUUID();
    const job = generation.toJob(requestId);
    if (inline) await queue.enqueue(withInlineImages(job, dto));
    else {
      await images.hold(requestId, /** @type {DecodedImage[]} */ (generation.images()));
      await queue.enqueue(job);
    }
  }
  const queued = (await usedMemory(redis)) - before;
  const stand = standInWorker(8);
  await until(() => stand.done() >= REQUESTS);
  await stand.worker.close();
  await new Promise((r) => setTimeout(r, 200));
  const finished = (await usedMemory(redis)) - before;
  const imageKeys = (await redis.keys(`${prefix}:image:*`)).length;
  return { queued, finished, imageKeys };
}

/**
 * (b) A batch's lines fed as the batch runner feeds them: at most WINDOW in flight; peak memory sampled.
 * @param {boolean} inline
 */
async function batch(inline) {
  await clean();
  const before = await usedMemory(redis);
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, (await usedMemory(redis)) - before);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const batchId = `batch_${randomBytes(12).toString('hex')}`;
  const stand = standInWorker(4, LINE_MS);
  const started = Date.now();
  for (let line = 1; line <= LINES; line++) {
    await until(() => line - 1 - stand.done() < WINDOW);
    const { dto, generation } = checked(chatBody(distinctPng(IMAGE_BYTES)));
    const requestId = batchLineJobId(batchId, line);
    const job = { ...generation.toJob(requestId), batch: { batchId, customId: `line-${line}`, line } };
    if (inline) await queue.enqueue(withInlineImages(job, dto));
    else {
      await images.hold(requestId, /** @type {DecodedImage[]} */ (generation.images()));
      await queue.enqueue(job);
    }
  }
  await until(() => stand.done() >= LINES);
  const seconds = (Date.now() - started) / 1000;
  sampling = false;
  await sampler;
  await stand.worker.close();
  const after = (await usedMemory(redis)) - before;
  return { peak, after, seconds };
}

try {
  console.log(
    `# node bench/image-memory.bench.mjs --requests ${REQUESTS} --lines ${LINES} --image-bytes ${IMAGE_BYTES} --window ${WINDOW} --line-ms ${LINE_MS}`,
  );
  const version = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1];
  console.log(
    `# ${cpus().length} cores, node ${process.version}, redis ${version}; Redis used_memory above an empty server`,
  );
  const base64 = Math.ceil(IMAGE_BYTES / 3) * 4;
  console.log(`# each image ${mb(IMAGE_BYTES)} (${mb(base64)} as base64), every one distinct`);
  console.log(`# finished interactive jobs are kept JOB_RETENTION_SECONDS (${config.redis.jobRetentionSeconds} s)\n`);

  const stored = await requests(false);
  const inline = await requests(true);
  const lines = await batch(false);
  const linesInline = await batch(true);
  /** @type {[string, number, number][]} */
  const rows = [
    [`(a) ${REQUESTS} requests, queued`, stored.queued, inline.queued],
    [`(a) ${REQUESTS} requests, finished`, stored.finished, inline.finished],
    [`(b) ${LINES}-line batch, peak while running`, lines.peak, linesInline.peak],
    [`(b) ${LINES}-line batch, after its last line`, lines.after, linesInline.after],
  ];
  console.log('| | images stored by hash | base64 in the job data |');
  console.log('|---|---|---|');
  for (const [what, byHash, inJob] of rows) console.log(`| ${what} | ${mb(byHash)} | ${mb(inJob)} |`);
  console.log(`\nImage keys left once the requests finished: ${stored.imageKeys}.`);
  console.log(
    `The batch ran ${WINDOW} lines in flight, 4 at a time for ${LINE_MS} ms each (${lines.seconds.toFixed(1)} s, and ` +
      `${linesInline.seconds.toFixed(1)} s with base64 in the jobs); all its images at once would be ${mb(LINES * IMAGE_BYTES)}.`,
  );
} finally {
  await queue.onApplicationShutdown();
  await apiConnection.onApplicationShutdown();
  await workerConnection.onApplicationShutdown();
  redis.disconnect();
  redisServer.proc.kill('SIGTERM');
}
