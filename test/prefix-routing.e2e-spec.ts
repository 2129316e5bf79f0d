import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import type { ChatCompletion } from '@conveyor/openai';
import { routeBlocksKey, routeLoadKey, routeWorkerName } from '@conveyor/queue';
import { fileLines, jsonl, submitBatch, waitForBatch } from './support/batches.js';
import { EVENTUALLY_MS, waitFor } from './support/jobs.js';
import { readJson } from './support/json.js';
import { REDIS_URL, TestPlatform, type ManagedProcess } from './support/platform.js';

const MODEL = 'conveyor-tiny';
type Turn = { role: 'system' | 'user' | 'assistant'; content: string };

/** Instructions long enough to route by (several 256-token chunks), distinct per `topic`. */
const instructions = (topic: string) =>
  `You answer questions about ${topic} in a friendly tone and never more than one line. `.repeat(30);

/** The value of one Prometheus sample on the API's /metrics, 0 when absent. */
async function metric(platform: TestPlatform, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${platform.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** The worker process that started a request's job (each worker logs `job started` with the request id). */
const ranOn = (platform: TestPlatform, completionId: string): ManagedProcess | undefined => {
  const requestId = completionId.slice(completionId.indexOf('-') + 1);
  return platform.workers.find((w) =>
    w.output.some((chunk) => chunk.includes(`"requestId":"${requestId}"`) && chunk.includes('job started')),
  );
};

/**
 * What `worker` has announced for routing: its free sequences and the prompt blocks it holds. A worker
 * writes them a moment after a reply ends, so a request sent right after one may find the announcement
 * before it lands; a test about where routing sends a request waits for it first.
 */
async function announcement(
  platform: TestPlatform,
  worker: ManagedProcess,
): Promise<{ free: number; blocks: string[] }> {
  const redis = new Redis(REDIS_URL);
  try {
    const name = routeWorkerName(`${hostname()}:${worker.proc.pid}`);
    const [free, blocks] = await Promise.all([
      redis.hget(routeLoadKey(platform.prefix, MODEL), name),
      redis.smembers(routeBlocksKey(platform.prefix, MODEL, name)),
    ]);
    return { free: Number(free ?? 0), blocks };
  } finally {
    redis.disconnect();
  }
}

const chat = async (platform: TestPlatform, body: Record<string, unknown>): Promise<ChatCompletion> => {
  const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, temperature: 0, max_tokens: 8, ...body }),
  });
  expect(res.status).toBe(200);
  return readJson<ChatCompletion>(res);
};

describe('cache-aware routing: a request goes to the worker that holds its prompt', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await TestPlatform.start({ workers: 3, env: { PARALLEL: '2', HEARTBEAT_MS: '500' } });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('each turn of a conversation lands on the worker holding it and reuses it, with others talking at once', async () => {
    const conversations = ['tides', 'volcanoes', 'orchids', 'comets'].map((topic) => ({
      history: [{ role: 'system', content: instructions(topic) }] as Turn[],
      workers: [] as Array<ManagedProcess | undefined>,
      reused: [] as number[],
      prompts: [] as number[],
    }));
    for (let turn = 1; turn <= 5; turn++) {
      await Promise.all(
        conversations.map(async (c) => {
          c.history.push({ role: 'user', content: `Question ${turn}: tell me one more thing, please.` });
          const reply = await chat(platform, { messages: c.history });
          c.history.push({ role: 'assistant', content: reply.choices[0]!.message.content ?? '' });
          c.workers.push(ranOn(platform, reply.id));
          c.reused.push(reply.usage.prompt_tokens_details?.cached_tokens ?? 0);
          c.prompts.push(reply.usage.prompt_tokens);
        }),
      );
    }
    // Turns 2 to 5 of every conversation: on the worker that ran the turn before, reusing what it computed.
    const followUps = conversations.flatMap((c) =>
      c.workers.slice(1).map((worker, i) => ({ same: worker === c.workers[i], reused: c.reused[i + 1]! })),
    );
    const landed = followUps.filter((f) => f.same && f.reused > 0).length;
    expect(landed / followUps.length).toBeGreaterThanOrEqual(0.9);
    expect(await metric(platform, 'conveyor_prefix_routes_total', 'outcome="hit"')).toBeGreaterThanOrEqual(landed);
  });

  it('a shared-prefix batch on several workers computes the shared part about once per sequence, not once per line', async () => {
    const shared = instructions('invoices');
    const items = Array.from({ length: 24 }, (_, i) => `Invoice ${i}: is it paid?`);
    const client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'any' });
    const batch = await submitBatch(
      client,
      jsonl(
        items.map((item, i) => ({
          custom_id: `i${i}`,
          body: {
            model: MODEL,
            messages: [
              { role: 'system', content: shared },
              { role: 'user', content: item },
            ],
            max_tokens: 4,
            temperature: 0,
          },
        })),
      ),
    );
    const done = await waitForBatch(client, batch.id, undefined, 90_000);
    expect(done.request_counts).toMatchObject({ total: items.length, completed: items.length });
    const output = await fileLines<ChatCompletion>(client, done.output_file_id);
    const prompt = output[0]!.response!.body.usage.prompt_tokens;
    // A line that reused less than the shared part minus one chunk computed the instructions itself.
    const computedShared = output.filter(
      (l) => (l.response!.body.usage.prompt_tokens_details?.cached_tokens ?? 0) < prompt - 2 * 256,
    ).length;
    // 3 workers × 2 sequences: at most one computation per sequence, and a little slack for the first wave.
    expect(computedShared).toBeLessThanOrEqual(6 + 2);
    expect(computedShared).toBeGreaterThan(0);
  });
});

describe('cache-aware routing under load and faults', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await TestPlatform.start({
      workers: 2,
      env: {
        PARALLEL: '1',
        HEARTBEAT_MS: '300',
        WORKER_LOCK_MS: '1000',
        WORKER_STALLED_INTERVAL_MS: '300',
      },
    });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  const live = () => platform.workers.filter((w) => w.proc.exitCode === null && w.proc.signalCode === null);

  it('a turn whose worker is busy goes to any free worker instead of waiting for it', async () => {
    const history: Turn[] = [
      { role: 'system', content: instructions('lighthouses') },
      { role: 'user', content: 'Where is the oldest one?' },
    ];
    const first = await chat(platform, { messages: history });
    const holder = ranOn(platform, first.id)!;
    const saturatedBefore = await metric(platform, 'conveyor_prefix_routes_total', 'outcome="saturated"');
    // A long reply on the same prompt goes to the holder and keeps its only sequence busy...
    const long = chat(platform, { messages: history, max_tokens: 1200, ignore_eos: true });
    await new Promise((r) => setTimeout(r, 300));
    // ...so the next turn is run by the other worker, long before the long reply ends.
    history.push({ role: 'assistant', content: first.choices[0]!.message.content ?? '' });
    history.push({ role: 'user', content: 'And the tallest?' });
    const next = await chat(platform, { messages: history });
    expect(ranOn(platform, next.id)).not.toBe(holder);
    expect(await metric(platform, 'conveyor_prefix_routes_total', 'outcome="saturated"')).toBe(saturatedBefore + 1);
    expect((await long).usage.completion_tokens).toBe(1200);
  });

  it("a conversation pushed out of its worker's only sequence is routed back there and read back from host memory", async () => {
    const history: Turn[] = [
      { role: 'system', content: instructions('tides') },
      { role: 'user', content: 'When is the next one?' },
    ];
    const first = await chat(platform, { messages: history });
    const holder = ranOn(platform, first.id)!;
    const tides = await waitFor(
      async () => {
        const { blocks } = await announcement(platform, holder);
        return blocks.length ? blocks : undefined;
      },
      EVENTUALLY_MS,
      'the holder announcing the tides',
    );
    // Two other conversations at once, one per worker: the holder's only sequence is taken, and the tides
    // go to its host memory (PROMPT_CACHE_RAM, on by default).
    const others = await Promise.all(
      ['reefs', 'dunes'].map((topic) =>
        chat(platform, {
          messages: [
            { role: 'system', content: instructions(topic) },
            { role: 'user', content: 'Tell me one thing.' },
          ],
        }),
      ),
    );
    expect(others.map((o) => ranOn(platform, o.id))).toContain(holder);
    // The holder announces its sequence free again and the tides still held (in host memory now).
    await waitFor(
      async () => {
        const { free, blocks } = await announcement(platform, holder);
        return free > 0 && tides.every((b) => blocks.includes(b)) ? true : undefined;
      },
      EVENTUALLY_MS,
      'the holder announcing a free sequence and the tides in host memory',
    );
    history.push({ role: 'assistant', content: first.choices[0]!.message.content ?? '' });
    history.push({ role: 'user', content: 'And the one after?' });
    const next = await chat(platform, { messages: history });
    // Neither worker's sequence holds the tides now: only the holder's host memory does.
    expect(ranOn(platform, next.id)).toBe(holder);
    expect(next.usage.prompt_tokens_details?.cached_tokens).toBeGreaterThanOrEqual(first.usage.prompt_tokens);
  });

  // Five rounds, each starting a worker (about 2 s) and failing over: well past jest's default timeout.
  it('requests routed to a worker that is killed, at different moments, all complete elsewhere', async () => {
    for (const [round, delayMs] of [0, 20, 80, 200, 500].entries()) {
      while (live().length < 2) await platform.startWorker();
      const history: Turn[] = [
        { role: 'system', content: instructions(`harbour ${round}`) },
        { role: 'user', content: 'First question.' },
      ];
      const first = await chat(platform, { messages: history });
      const holder = ranOn(platform, first.id)!;
      history.push({ role: 'assistant', content: first.choices[0]!.message.content ?? '' });
      history.push({ role: 'user', content: 'Second question.' });
      // Three follow-ups routed to the holder (one runs, the others wait in its queue or move on); each
      // reply takes about a second, so the kill finds the first one running and the others waiting.
      const pending = [0, 1, 2].map((i) =>
        chat(platform, {
          messages: [...history, { role: 'user', content: `Part ${i}` }],
          max_tokens: 150,
          ignore_eos: true,
        }),
      );
      await new Promise((r) => setTimeout(r, delayMs));
      holder.proc.kill('SIGKILL');
      const replies = await Promise.all(pending);
      // Whole replies, each counted once, whichever worker finished them.
      for (const reply of replies) {
        expect(reply.choices[0]!.finish_reason).toBe('length');
        expect(reply.usage.completion_tokens).toBe(150);
      }
    }
  }, 150_000);
});
