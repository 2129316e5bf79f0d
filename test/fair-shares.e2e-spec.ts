import { Queue } from 'bullmq';
import OpenAI from 'openai';
import { hashKey } from '@conveyor/config';
import { deploymentQueueName } from '@conveyor/queue';
import { chatLine, jsonl, submitBatch, waitForBatch } from './support/batches.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { EVENTUALLY_MS, waitFor } from './support/jobs.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';

/** Sequences of the one worker: each line takes about a second, so 16 lines finish a second. */
const PARALLEL = 16;
const HEAVY_LINES = 1200;
const LIGHT_LINES = 50;
/** Places in each deployment's queue, for the interactive part. */
const QUEUE_DEPTH = 20;

const KEYS = { a: 'sk-team-a', b: 'sk-team-b', c: 'sk-team-c' } as const;
const config = writeDeploymentsFile({
  deployments: [
    // 300 ms to the first token, then 14 more 50 ms apart: a line is about a second.
    {
      id: 'sim',
      engine: 'simulated',
      simulated: { ttftMs: 300, tpotMs: 50, outputTokens: 15, text: 'alpha beta gamma' },
      parallel: PARALLEL,
      contextSize: 1024,
    },
    // Served by no worker: its requests wait in the queue, holding their places.
    { id: 'idle', engine: 'simulated', simulated: { ttftMs: 10, tpotMs: 10, outputTokens: 1 }, parallel: 1 },
  ],
  apiKeys: [
    { name: 'team-a', sha256: hashKey(KEYS.a) },
    { name: 'team-b', sha256: hashKey(KEYS.b) },
    { name: 'team-c', sha256: hashKey(KEYS.c), weight: 3 },
  ],
});

interface Figures {
  /** Seconds from the light batch's creation to its completion. */
  lightSeconds: number;
  /** Lines of the heavy key's batches done when the light batch completed, of HEAVY_LINES. */
  heavyDoneAtEnd: number;
  /** The light key's share of the lines served while both ran: from its 10th line to its 40th, and overall. */
  share: number;
  overallShare: number;
}

type Client = OpenAI;
const client = (platform: TestPlatform, key: string): Client =>
  new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: key, maxRetries: 0 });

const lines = (prefix: string, count: number) =>
  jsonl(Array.from({ length: count }, (_, i) => chatLine(`${prefix}-${i}`, { model: 'sim', max_tokens: 15 })));

/**
 * The heavy key runs `heavyBatches` batches of HEAVY_LINES in all; once they are under way, the light key
 * submits LIGHT_LINES. Both batches' counts are read every 100 ms until the light one completes; then the
 * heavy ones are cancelled, and end, before the next scenario.
 */
async function compete(heavy: Client, light: Client, heavyBatches: number): Promise<Figures> {
  const heavyIds: string[] = [];
  for (let i = 0; i < heavyBatches; i++) {
    heavyIds.push((await submitBatch(heavy, lines(`h${i}`, HEAVY_LINES / heavyBatches))).id);
  }
  const heavyDone = async () => {
    const batches = await Promise.all(heavyIds.map((id) => heavy.batches.retrieve(id)));
    return batches.reduce((sum, b) => sum + (b.request_counts?.completed ?? 0), 0);
  };
  // Under way: two windows' worth done, so the queue holds what the heavy key keeps in flight.
  while ((await heavyDone()) < 2 * PARALLEL) await new Promise((r) => setTimeout(r, 100));
  const started = Date.now();
  const lightId = (await submitBatch(light, lines('l', LIGHT_LINES))).id;
  /** The heavy key's lines done when the light one had done 1, 10 and 40, and when it completed. */
  const at = new Map<number, number>();
  let lightSeconds: number;
  for (;;) {
    const [batch, done] = await Promise.all([light.batches.retrieve(lightId), heavyDone()]);
    const completed = batch.request_counts?.completed ?? 0;
    for (const mark of [1, 10, 40]) if (completed >= mark && !at.has(mark)) at.set(mark, done);
    if (batch.status === 'completed') {
      lightSeconds = (Date.now() - started) / 1000;
      at.set(LIGHT_LINES, done);
      break;
    }
    if (Date.now() - started > 90_000) throw new Error(`light batch still ${batch.status} after 90 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const id of heavyIds) await heavy.batches.cancel(id);
  for (const id of heavyIds) await waitForBatch(heavy, id, undefined, 60_000);
  const shareOf = (from: number, to: number) => (to - from) / (to - from + at.get(to)! - at.get(from)!);
  return {
    lightSeconds,
    heavyDoneAtEnd: at.get(LIGHT_LINES)!,
    share: shareOf(10, 40),
    overallShare: shareOf(1, LIGHT_LINES),
  };
}

const show = (label: string, f: Figures) =>
  console.log(
    `${label}: light batch done in ${f.lightSeconds.toFixed(1)} s, heavy key's lines done then ` +
      `${f.heavyDoneAtEnd} of ${HEAVY_LINES}, light key's share ${f.share.toFixed(2)} (10th to 40th line), ` +
      `${f.overallShare.toFixed(2)} (first to last)`,
  );

/**
 * One request of `key` to the deployment no worker serves, answered when its queue deadline passes; resolves
 * to its status. A refusal (429) comes at once.
 */
const waiting = (platform: TestPlatform, key: string): Promise<number> =>
  fetch(`${platform.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'idle', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }),
  }).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });

/**
 * How many of `statuses` were admitted: once each is either refused (a 429 comes at once) or waiting in
 * the idle deployment's queue (it is answered at its queue deadline), counted from `queued` jobs before.
 */
async function admittedOf(queue: Queue, queued: number, statuses: Promise<number>[]): Promise<number> {
  let refused = 0;
  for (const s of statuses) void s.then((status) => (refused += status === 429 ? 1 : 0));
  const waitingNow = async () => (await queue.getJobCountByTypes('waiting', 'prioritized')) - queued;
  return waitFor(
    async () => {
      const admitted = await waitingNow();
      return refused + admitted === statuses.length ? admitted : undefined;
    },
    EVENTUALLY_MS,
    'every request refused or queued',
  );
}

/** B holds one place; A bursts twice the queue; then B asks for more. Returns what A and B got. */
async function burst(platform: TestPlatform): Promise<{ a: number; b: number; all: Promise<number>[] }> {
  const queue = new Queue(deploymentQueueName('idle'), { connection: { url: REDIS_URL }, prefix: platform.prefix });
  try {
    const first = [waiting(platform, KEYS.b)];
    expect(await admittedOf(queue, 0, first)).toBe(1);
    const ofA = Array.from({ length: 2 * QUEUE_DEPTH }, () => waiting(platform, KEYS.a));
    const a = await admittedOf(queue, 1, ofA);
    const ofB = Array.from({ length: QUEUE_DEPTH }, () => waiting(platform, KEYS.b));
    const b = 1 + (await admittedOf(queue, 1 + a, ofB));
    return { a, b, all: [...first, ...ofA, ...ofB] };
  } finally {
    await queue.close();
  }
}

function platformEnv(fair: boolean): Record<string, string> {
  return {
    CONVEYOR_CONFIG: config,
    FAIR_SHARES: String(fair),
    BATCH_INFLIGHT: '4',
    MAX_QUEUE_DEPTH: String(QUEUE_DEPTH),
    // The admitted requests of a burst hold their places until the next burst has been answered, however
    // slow a loaded machine is to answer them.
    QUEUE_TIMEOUT_MS: '15000',
  };
}

describe('fair shares between API keys, weighted (FAIR_SHARES on)', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await TestPlatform.start({ workers: 0, env: platformEnv(true) });
    await platform.startWorker({}, ['--deployments', 'sim']);
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it("serves a small batch of one key beside another key's huge one, each key by its weight", async () => {
    const a = client(platform, KEYS.a);
    const even = await compete(a, client(platform, KEYS.b), 1);
    show('fair, weights 1:1', even);
    const weighted = await compete(a, client(platform, KEYS.c), 1);
    show('fair, weights 1:3', weighted);
    const many = await compete(a, client(platform, KEYS.b), 4);
    show("fair, weights 1:1, the heavy key's lines in 4 batches", many);
    for (const f of [even, weighted, many]) expect(f.heavyDoneAtEnd).toBeLessThan(HEAVY_LINES / 4);
    expect(even.share).toBeGreaterThan(0.35);
    expect(even.share).toBeLessThan(0.65);
    expect(weighted.share).toBeGreaterThan(0.6);
    expect(weighted.share).toBeLessThan(0.9);
    // A key's batches share its one share: four of them take no more than one would.
    expect(many.share).toBeGreaterThan(0.35);
    expect(many.share).toBeLessThan(0.65);
  }, 240_000);

  it("keeps the queue places another key is short of its share free of one key's burst", async () => {
    const { a, b, all } = await burst(platform);
    console.log(`fair: of ${QUEUE_DEPTH} places, the bursting key got ${a}, the other ${b}`);
    expect(a).toBe(QUEUE_DEPTH / 2);
    expect(b).toBe(QUEUE_DEPTH / 2);
    // The admitted wait out their queue deadline (no worker serves the deployment): 503, not an error of ours.
    expect((await Promise.all(all)).filter((s) => s !== 429).every((s) => s === 503)).toBe(true);
  });
});

describe('the same without fair shares (FAIR_SHARES off), for comparison', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await TestPlatform.start({ workers: 0, env: platformEnv(false) });
    await platform.startWorker({}, ['--deployments', 'sim']);
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('shares per batch, weights aside: a key with four batches takes four shares', async () => {
    const a = client(platform, KEYS.a);
    const even = await compete(a, client(platform, KEYS.b), 1);
    show('unfair, weights 1:1', even);
    const weighted = await compete(a, client(platform, KEYS.c), 1);
    show('unfair, weights 1:3', weighted);
    const many = await compete(a, client(platform, KEYS.b), 4);
    show("unfair, weights 1:1, the heavy key's lines in 4 batches", many);
    expect(many.share).toBeLessThan(0.35);
  }, 240_000);

  it('gives the places first come, first served: a burst takes every one', async () => {
    const { a, b, all } = await burst(platform);
    console.log(`unfair: of ${QUEUE_DEPTH} places, the bursting key got ${a}, the other ${b}`);
    expect(a).toBe(QUEUE_DEPTH - 1);
    expect(b).toBe(1);
    await Promise.all(all);
  });
});
