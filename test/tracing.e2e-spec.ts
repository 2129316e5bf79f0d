import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import OpenAI from 'openai';
import type { ChatCompletion } from '@conveyor/openai';
import { deploymentQueueName } from '@conveyor/queue';
import { chatLine, jsonl, submitBatch, waitForBatch } from './support/batches.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver.js';
import { exited, REDIS_URL, TestPlatform } from './support/platform.js';

/** A deployment with no model: the trace is the platform's, not the model's. */
const config = writeDeploymentsFile({
  deployments: [
    {
      id: 'sim',
      engine: 'simulated',
      simulated: { ttftMs: 50, tpotMs: 10, outputTokens: 6, text: 'alpha beta gamma' },
      parallel: 2,
      contextSize: 1024,
    },
  ],
});

/** Words no span may carry: the prompt is the client's, and spans carry none without TRACE_PROMPTS. */
const SECRET = 'zebra-marmalade-tangerine';
const KEY = 'sk-tracing-test-key-0123456789';

const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

async function chat(baseUrl: string, headers: Record<string, string>): Promise<string> {
  const res = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      model: 'sim',
      messages: [{ role: 'user', content: `Say ${SECRET}` }],
      max_tokens: 4,
      temperature: 0.5,
      top_p: 0.9,
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as ChatCompletion).id.slice('chatcmpl-'.length);
}

/** The spans of one trace, once `done` says all have come: each process exports its spans in batches, later. */
async function traceOf(receiver: OtlpReceiver, traceId: string, done: (spans: ReceivedSpan[]) => boolean) {
  const until = Date.now() + 45_000;
  for (;;) {
    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    if (done(spans)) return spans;
    if (Date.now() > until) throw new Error(`trace incomplete: ${spans.map((s) => s.name).join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The first span `pick` takes, once it has come. */
async function spanWhere(receiver: OtlpReceiver, pick: (s: ReceivedSpan) => boolean): Promise<ReceivedSpan> {
  const until = Date.now() + 45_000;
  for (;;) {
    const found = receiver.spans.find(pick);
    if (found) return found;
    if (Date.now() > until) throw new Error('no such span came');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('traces exported over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let platform: TestPlatform;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    platform = await TestPlatform.start({
      env: {
        CONVEYOR_CONFIG: config,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
    });
  });

  afterAll(async () => {
    await platform?.stop();
    await receiver?.stop();
  });

  it('follow a request from the caller through the queue to the generation, without its prompt', async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const requestId = await chat(platform.baseUrl, {
      traceparent: `00-${traceId}-${callerSpan}-01`,
      authorization: `Bearer ${KEY}`,
    });
    const spans = await traceOf(
      receiver,
      traceId,
      (got) =>
        [SERVER, PRODUCER, CONSUMER].every((kind) => got.some((s) => s.kind === kind)) &&
        got.some((s) => s.name === 'chat sim'),
    );
    const one = (pick: (s: ReceivedSpan) => boolean, what: string): ReceivedSpan => {
      const found = spans.filter(pick);
      if (found.length !== 1) throw new Error(`${found.length} ${what} spans in ${spans.map((s) => s.name)}`);
      return found[0]!;
    };

    // The API's server span continues the caller's.
    const server = one((s) => s.kind === SERVER, 'server');
    expect(server).toMatchObject({
      service: 'conveyor-api',
      parentSpanId: callerSpan,
      name: 'POST /v1/chat/completions',
    });
    expect(server.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 200 });
    // Queuing the job is BullMQ's producer span, inside the request; taking it, its consumer span in the worker.
    const producer = one((s) => s.kind === PRODUCER, 'producer');
    expect(producer.parentSpanId).toBe(server.spanId);
    expect(producer.attributes['bullmq.job.id']).toBe(requestId);
    const consumer = one((s) => s.kind === CONSUMER, 'consumer');
    expect(consumer).toMatchObject({ service: 'conveyor-worker', parentSpanId: producer.spanId });
    // The generation, by the GenAI conventions.
    const generation = one((s) => s.name === 'chat sim', 'generation');
    expect(generation.parentSpanId).toBe(consumer.spanId);
    expect(generation.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'conveyor.simulated',
      'gen_ai.request.model': 'sim',
      'gen_ai.request.max_tokens': 4,
      'gen_ai.request.temperature': 0.5,
      'gen_ai.request.top_p': 0.9,
      'gen_ai.response.id': requestId,
      'gen_ai.response.finish_reasons': ['length'],
      'gen_ai.usage.output_tokens': 4,
      'gen_ai.usage.cache_read.input_tokens': 0,
    });
    expect(generation.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(generation.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0);
    expect(generation.events).toContain('first chunk');
    const children = spans.filter((s) => s.parentSpanId === generation.spanId).map((s) => s.name);
    expect(children.sort()).toEqual(['prefill', 'queue wait']);

    // Neither the prompt nor the key is anywhere in what was exported.
    const exported = receiver.bodies.join('\n');
    expect(exported).not.toContain(SECRET);
    expect(exported).not.toContain(KEY);
  });

  // A streamed chat and a Responses call take the same path: the server span of their own route, BullMQ's
  // producer and consumer spans, and the generation span, one trace from the caller's traceparent.
  it.each([
    {
      what: 'a streamed chat',
      route: '/v1/chat/completions',
      body: { model: 'sim', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4, stream: true },
    },
    { what: 'a Responses call', route: '/v1/responses', body: { model: 'sim', input: 'Hi', max_output_tokens: 4 } },
    {
      what: 'a streamed Responses call',
      route: '/v1/responses',
      body: { model: 'sim', input: 'Hi', max_output_tokens: 4, stream: true },
    },
  ])('follow $what through the same spans', async ({ route, body }) => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const res = await fetch(`${platform.baseUrl}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${callerSpan}-01` },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    if (body.stream) expect(text).toContain('data: ');
    const spans = await traceOf(
      receiver,
      traceId,
      (got) =>
        [SERVER, PRODUCER, CONSUMER].every((kind) => got.some((s) => s.kind === kind)) &&
        got.some((s) => s.name === 'chat sim'),
    );
    const server = spans.find((s) => s.kind === SERVER)!;
    expect(server).toMatchObject({ service: 'conveyor-api', parentSpanId: callerSpan, name: `POST ${route}` });
    const producer = spans.find((s) => s.kind === PRODUCER)!;
    expect(producer.parentSpanId).toBe(server.spanId);
    const consumer = spans.find((s) => s.kind === CONSUMER)!;
    expect(consumer.parentSpanId).toBe(producer.spanId);
    const generation = spans.find((s) => s.name === 'chat sim')!;
    expect(generation.parentSpanId).toBe(consumer.spanId);
    expect(generation.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.max_tokens': 4,
      'gen_ai.usage.output_tokens': 4,
    });
  });

  it('start a trace of its own for a request that brings none', async () => {
    const requestId = await chat(platform.baseUrl, {});
    const producer = await spanWhere(
      receiver,
      (s) => s.kind === PRODUCER && s.attributes['bullmq.job.id'] === requestId,
    );
    const server = receiver.spans.find((s) => s.spanId === producer.parentSpanId);
    expect(server).toMatchObject({ kind: SERVER, traceId: producer.traceId, parentSpanId: '' });
  });

  it('give each batch line a trace of its own, linked to the request that made the batch', async () => {
    const client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
    const lines = ['one', 'two'].map((id) => chatLine(id, { model: 'sim' }));
    const batch = await submitBatch(client, jsonl(lines));
    await waitForBatch(client, batch.id);
    const made = await spanWhere(receiver, (s) => s.kind === SERVER && s.name === 'POST /v1/batches');
    const ofBatch = (sp: ReceivedSpan) => sp.name === 'batch line' && sp.attributes['conveyor.batch.id'] === batch.id;
    await spanWhere(receiver, (sp) => ofBatch(sp) && receiver.spans.filter(ofBatch).length === 2);
    const roots = receiver.spans.filter(ofBatch);
    for (const root of roots) {
      expect(root).toMatchObject({ parentSpanId: '', links: [{ traceId: made.traceId, spanId: made.spanId }] });
      expect(root.traceId).not.toBe(made.traceId);
      // The line's job and its generation are in the line's trace.
      await spanWhere(receiver, (s) => s.name === 'chat sim' && s.traceId === root.traceId);
    }
    expect(roots[0]!.traceId).not.toBe(roots[1]!.traceId);
  });
});

describe('traces through an OpenAI-compatible upstream', () => {
  let receiver: OtlpReceiver;
  let upstream: TestPlatform;
  let platform: TestPlatform;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    const otlp = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
    // Conveyor itself as the model server that traces (as vLLM does): its server span must join the trace.
    upstream = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config, OTEL_SERVICE_NAME: 'upstream', ...otlp } });
    const front = writeDeploymentsFile({
      deployments: [{ id: 'front', engine: 'openai', upstream: { url: `${upstream.baseUrl}/v1`, model: 'sim' } }],
    });
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: front, ...otlp } });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await upstream?.stop();
    await receiver?.stop();
  });

  it('sends the generation span’s traceparent to the upstream, whose own spans join the trace', async () => {
    const traceId = randomBytes(16).toString('hex');
    const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
      body: JSON.stringify({ model: 'front', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 3 }),
    });
    expect(res.status).toBe(200);
    const spans = await traceOf(
      receiver,
      traceId,
      (got) =>
        got.some((s) => s.service === 'upstream' && s.kind === SERVER) && got.some((s) => s.name === 'chat front'),
    );
    const generation = spans.find((s) => s.name === 'chat front')!;
    expect(generation).toMatchObject({ kind: CLIENT, attributes: { 'gen_ai.provider.name': 'openai' } });
    const upstreamServer = spans.find((s) => s.service === 'upstream' && s.kind === SERVER)!;
    expect(upstreamServer).toMatchObject({ name: 'POST /v1/chat/completions', parentSpanId: generation.spanId });
  });
});

describe('traces of a reply handed from one worker to another', () => {
  let receiver: OtlpReceiver;
  let platform: TestPlatform;
  const slow = writeDeploymentsFile({
    deployments: [
      {
        id: 'slow',
        engine: 'simulated',
        simulated: { ttftMs: 50, tpotMs: 40, outputTokens: 100, text: 'one two three' },
        parallel: 1,
        contextSize: 1024,
      },
    ],
  });

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    platform = await TestPlatform.start({
      env: {
        CONVEYOR_CONFIG: slow,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        WORKER_SHUTDOWN_GRACE_MS: '0',
      },
      workers: 2,
    });
  });

  afterAll(async () => {
    await platform?.stop();
    await receiver?.stop();
  });

  it('show both attempts, each under the job’s one producer span', async () => {
    const traceId = randomBytes(16).toString('hex');
    const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
      body: JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'Go' }], stream: true }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    // The worker holding the reply stops and hands it back (its spans exported as it exits); the other takes it.
    const holder = platform.workers.find((w) => w.output.join('').includes('job started'))!;
    const gone = exited(holder);
    holder.proc.kill('SIGTERM');
    await gone;
    while (!(await reader.read()).done);

    const spans = await traceOf(
      receiver,
      traceId,
      (got) =>
        got.filter((s) => s.name === 'chat slow').length === 2 &&
        got.filter((s) => s.kind === CONSUMER).length === 2 &&
        got.some((s) => s.kind === PRODUCER),
    );
    const attempts = spans.filter((s) => s.name === 'chat slow');
    expect(attempts.map((s) => s.attributes['conveyor.attempt']).sort()).toEqual([1, 2]);
    const producer = spans.find((s) => s.kind === PRODUCER)!;
    for (const attempt of attempts) {
      const consumer = spans.find((s) => s.spanId === attempt.parentSpanId);
      expect(consumer).toMatchObject({ kind: CONSUMER, parentSpanId: producer.spanId });
    }
  });
});

describe('with no OpenTelemetry variables set', () => {
  let platform: TestPlatform;
  let queue: Queue;

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config } });
    queue = new Queue(deploymentQueueName('sim'), { connection: { url: REDIS_URL }, prefix: platform.prefix });
  });

  afterAll(async () => {
    await queue?.close();
    await platform?.stop();
  });

  it('no trace context rides in the jobs, even for a caller that sends one', async () => {
    const traceId = randomBytes(16).toString('hex');
    const requestId = await chat(platform.baseUrl, {
      traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
    });
    const job = await queue.getJob(requestId);
    expect(job?.data).toMatchObject({ requestId });
    expect(job?.opts.telemetry).toBeUndefined();
  });
});
