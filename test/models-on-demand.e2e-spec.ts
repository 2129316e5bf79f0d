import { Redis } from 'ioredis';
import type { ChatCompletion, ModelList, OpenAiErrorBody } from '@conveyor/openai';
import { admissionKey } from '@conveyor/queue';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { readJson } from './support/json.js';
import { OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver.js';
import { REDIS_URL, TestPlatform, type ManagedProcess } from './support/platform.js';

/**
 * Two real llama.cpp models loaded on demand, on one worker whose memory budget holds one of them beside
 * a pinned deployment: each generated model takes 4 MiB as estimated (its 2.5 MB file and the KV cache of
 * 2 sequences of 512 tokens), the pinned one 5, one kept warm 1, the budget 11. Another on-demand
 * deployment names a file that does not exist.
 */
const config = writeDeploymentsFile({
  deployments: [
    { id: 'pinned', engine: 'simulated', simulated: { ttftMs: 10, tpotMs: 5 }, memoryMb: 5 },
    { id: 'first', model: 'tiny', load: 'on-demand', parallel: 2, contextSize: 512 },
    { id: 'second', model: 'think', load: 'on-demand', parallel: 2, contextSize: 512 },
    { id: 'missing', model: '/nonexistent/model.gguf', load: 'on-demand' },
    // Kept warm on one worker, with no request: loaded at once, never unloaded for the others.
    { id: 'warm', engine: 'simulated', load: 'on-demand', minWarm: 1, memoryMb: 1 },
  ],
});

describe('models on demand within a worker memory budget', () => {
  let platform: TestPlatform;
  let worker: ManagedProcess;
  let receiver: OtlpReceiver;

  const chat = (model: string, content = 'Hello on demand.') =>
    fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens: 4, temperature: 0 }),
    });
  const statuses = async (): Promise<Record<string, string>> => {
    const list = await readJson<ModelList>(await fetch(`${platform.baseUrl}/v1/models`));
    return Object.fromEntries(list.data.map((m) => [m.id, m.status]));
  };
  /** Lines of the worker's log saying `text`, its quotes as JSON logs escape them or not. */
  const logged = (text: string): number =>
    worker.output.join('').match(new RegExp(text.replace(/"/g, '\\\\?"'), 'g'))?.length ?? 0;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    platform = await TestPlatform.start({
      workers: 0,
      env: {
        CONVEYOR_CONFIG: config,
        HEARTBEAT_MS: '300',
        QUEUE_TIMEOUT_MS: '60000',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
    });
    worker = await platform.startWorker({ WORKER_MEMORY_BUDGET_MB: '11', MODEL_DEMAND_POLL_MS: '100' });
  });

  afterAll(async () => {
    await platform?.stop();
    await receiver?.stop();
  });

  /** The first span `pick` takes, once its process has exported it (spans go out in batches, later). */
  const spanWhere = async (pick: (s: ReceivedSpan) => boolean): Promise<ReceivedSpan[]> => {
    for (const until = Date.now() + 45_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      const found = receiver.spans.filter(pick);
      if (found.length) return found;
    }
    throw new Error('no such span came');
  };

  it('lists on-demand models as cold before any request, the pinned one as ready, and loads the one kept warm', async () => {
    expect(await statuses()).toMatchObject({ pinned: 'ready', first: 'cold', second: 'cold', missing: 'cold' });
    for (
      const until = Date.now() + 15_000;
      (await statuses()).warm !== 'ready';
      await new Promise((r) => setTimeout(r, 100))
    )
      if (Date.now() > until) throw new Error('the deployment kept warm was never loaded');
    expect(logged('Loaded "warm" on demand')).toBe(1);
    // Ready with cold on-demand models: they load when asked, so the API must be reachable to ask.
    const ready = await fetch(`${platform.baseUrl}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ready',
      deployments: { pinned: { live_workers: 1 }, first: { live_workers: 0, on_demand: true } },
    });
  });

  it('answers requests alternating between two models that do not fit together, loading one at a time', async () => {
    const order = ['first', 'second', 'first', 'second', 'first', 'second'];
    for (const model of order) {
      const res = await chat(model);
      expect(res.status).toBe(200);
      const body = await readJson<ChatCompletion>(res);
      expect(body.model).toBe(model);
      expect(body.choices[0]!.message.content).toBeTruthy();
    }
    // Each switch loaded the model asked for and unloaded the other: six loads, five unloads, none lost.
    expect(logged('Loaded "first" on demand')).toBe(3);
    expect(logged('Loaded "second" on demand')).toBe(3);
    expect(logged('Unloaded "(first|second)"')).toBe(5);
    // The pinned deployment was never unloaded, and answers all along.
    expect(logged('Unloaded "pinned"')).toBe(0);
    expect((await chat('pinned')).status).toBe(200);
    expect((await statuses()).second).toBe('ready');
    expect(logged('Loaded "second" on demand in \\d+ ms \\(4 MiB; 10 MiB held\\)')).toBe(3);
    expect(logged('Unloaded "warm"')).toBe(0);
  });

  it("draws the load a request waited for in that request's trace", async () => {
    const [load] = await spanWhere((s) => s.name === 'model load' && s.attributes['conveyor.deployment'] === 'first');
    const generation = await spanWhere((s) => s.traceId === load!.traceId && s.name === 'chat first');
    expect(generation[0]!.spanId).toBe(load!.parentSpanId);
  });

  it('answers every request of a burst to both models at once, none lost', async () => {
    const models = ['first', 'second', 'first', 'second', 'first', 'second', 'first', 'second'];
    const replies = await Promise.all(models.map((m, i) => chat(m, `burst ${i}`)));
    expect(replies.map((r) => r.status)).toEqual(models.map(() => 200));
    const bodies = await Promise.all(replies.map((r) => readJson<ChatCompletion>(r)));
    expect(bodies.map((b) => b.model)).toEqual(models);
  });

  it('fails the requests of a model that cannot load with the reason, not a timeout', async () => {
    const started = Date.now();
    const res = await chat('missing');
    expect(res.status).toBe(503);
    const { error } = await readJson<OpenAiErrorBody>(res);
    expect(error.code).toBe('model_unavailable');
    expect(error.message).toMatch(/could not be loaded: Model file not found/);
    expect(Date.now() - started).toBeLessThan(30_000);
    // Its place in the queue was given back, as a worker taking a job gives it back.
    const redis = new Redis(REDIS_URL);
    try {
      expect(await redis.zcard(admissionKey(platform.prefix, 'missing'))).toBe(0);
    } finally {
      redis.disconnect();
    }
  });
});
