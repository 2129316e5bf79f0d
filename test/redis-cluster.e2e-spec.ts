import { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import OpenAI from 'openai';
import { bullQueueKey } from '@conveyor/bullmq-seam';
import type { ChatCompletion } from '@conveyor/openai';
import { deploymentQueueName, useHashTags } from '@conveyor/queue';
import { chatLine, fileLines, finishedBatch, jsonl, submitBatch } from './support/batches.js';
import { SseReader, EVENTUALLY_MS, waitFor } from './support/jobs.js';
import { readJson } from './support/json.js';
import { LoadDriver, chatRequest, type FailoverRun, type RequestRecord } from './support/load.js';
import { nonJsonLines } from './support/logs.js';
import { TestPlatform } from './support/platform.js';
import { RedisCluster } from './support/redis-cluster.js';

const MODEL = 'conveyor-tiny';
/** Replies of these lengths keep the workers busy; the probes' short ones show when service is back. */
const LENGTHS = [16, 48, 96];
const PROBE_LENGTH = 4;
const LANES = 6;
const PROBES = 2;
/** A request not answered within this counts as lost. */
const HANG_BOUND_MS = 20_000;
/** Service back after a failover within this long, below a request's hang bound (see the assertion). */
const SERVICE_BACK_MS = 15_000;
/** Moments of the kills: after the load (or the previous recovery) has run this long. */
const KILL_AFTER_MS = [700, 1300, 400];
const BATCH_LINES = 24;
const MAX_QUEUE_DEPTH = 12;

/** Instructions long enough to route by (several 256-token chunks). */
const instructions = `You answer questions about tides in a friendly tone and never more than one line. `.repeat(30);

async function metric(baseUrl: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('Redis Cluster: the platform on three shards, and a primary killed under load', () => {
  let cluster: RedisCluster;
  let platform: TestPlatform;
  let secondUrl: string;
  let client: OpenAI;
  let queue: Queue;
  let queueConnection: Cluster;

  /** The deployment's queue: every job passes through its shard. */
  const busiest = () => bullQueueKey(platform.prefix, deploymentQueueName(MODEL), 'wait');
  const post = (body: Record<string, unknown>, signal?: AbortSignal, baseUrl = platform.baseUrl) =>
    fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Hello' }], ...body }),
      signal,
    });

  beforeAll(async () => {
    // Names as the platform's processes give them on a cluster (they tag keys by deployment, batch, image).
    useHashTags(true);
    cluster = await RedisCluster.start({ nodeTimeoutMs: 2000 });
    platform = await TestPlatform.start({
      workers: 2,
      env: {
        REDIS_CLUSTER_NODES: cluster.seeds,
        // Nothing listens there: with cluster seeds, only the URL's password and scheme are used.
        REDIS_URL: 'redis://127.0.0.1:1',
        PARALLEL: '2',
        BATCH_INFLIGHT: '4',
        HEARTBEAT_MS: '1000',
        MAX_QUEUE_DEPTH: String(MAX_QUEUE_DEPTH),
        DATA_DIR: `/tmp/conveyor-test-data-${process.pid}`,
      },
    });
    ({ baseUrl: secondUrl } = await platform.startExtraApi());
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused', maxRetries: 10 });
    queueConnection = new Cluster(
      cluster.seeds.split(',').map((s) => ({ host: '127.0.0.1', port: Number(s.split(':')[1]) })),
    );
    queueConnection.on('error', () => undefined);
    queue = new Queue(deploymentQueueName(MODEL), { connection: queueConnection, prefix: platform.prefix });
    queue.on('error', () => undefined);
  }, 90_000);

  afterAll(async () => {
    await queue?.close();
    queueConnection?.disconnect();
    await platform?.stop();
    await cluster?.stop();
    useHashTags(false);
  });

  it('serves sync and streamed chat, its queue in the deployment’s own slot', async () => {
    const sync = await post({ max_tokens: 6, temperature: 0 });
    expect(sync.status).toBe(200);
    expect((await readJson<ChatCompletion>(sync)).usage.completion_tokens).toBe(6);
    const streamed = await post({ max_tokens: 6, stream: true, stream_options: { include_usage: true } });
    const sse = new SseReader(streamed.body!.getReader());
    const payloads = await sse.rest();
    expect(payloads.at(-1)).toBe('[DONE]');
    expect(JSON.parse(payloads.at(-2)!).usage.completion_tokens).toBe(6);
    expect(deploymentQueueName(MODEL)).toBe(`jobs.{${MODEL}}`);
    // A reply's end reaches the client before its worker marks the job completed.
    const completed = () => queue.getJobCountByTypes('completed');
    await waitFor(async () => ((await completed()) >= 2 ? true : undefined), EVENTUALLY_MS, 'both jobs completed');
  });

  it('resumes a stream on another API replica from its Last-Event-ID, every chunk once', async () => {
    const res = await post({
      max_tokens: 120,
      stream: true,
      ignore_eos: true,
      stream_options: { include_usage: true },
    });
    const first = new SseReader(res.body!.getReader());
    await first.next(4);
    const id = JSON.parse(first.payloads[0]!).id as string;
    const lastId = first.ids.filter((i): i is number => i !== null).at(-1)!;
    const resumed = await fetch(`${secondUrl}/v1/chat/completions/${id}/stream?include_usage=true`, {
      headers: { 'last-event-id': String(lastId) },
    });
    expect(resumed.status).toBe(200);
    const rest = new SseReader(resumed.body!.getReader());
    const [after, whole] = await Promise.all([rest.rest(), first.rest()]);
    expect(after.at(-1)).toBe('[DONE]');
    expect(rest.ids.slice(0, -1)).toEqual(after.slice(0, -1).map((_, i) => lastId + 1 + i));
    // What the resumed stream carries is exactly what the first one carried after that chunk.
    expect(after).toEqual(whole.slice(first.ids.indexOf(lastId) + 1));
    expect(JSON.parse(after.at(-2)!).usage.completion_tokens).toBe(120);
  });

  it('stops a generation whose client left, and frees its sequence', async () => {
    const controller = new AbortController();
    const res = await post({ max_tokens: 3000, stream: true, ignore_eos: true }, controller.signal);
    const sse = new SseReader(res.body!.getReader());
    await sse.next(1);
    const requestId = (JSON.parse(sse.payloads[0]!).id as string).replace('chatcmpl-', '');
    controller.abort();
    const reason = await waitFor(async () => (await queue.getJob(requestId))?.failedReason || undefined, EVENTUALLY_MS);
    expect(reason).toMatch(/cancelled/);
    const next = await Promise.all([1, 2, 3, 4].map(() => post({ max_tokens: 4 })));
    expect(next.map((r) => r.status)).toEqual([200, 200, 200, 200]);
  });

  it('routes a conversation’s next turn to the worker holding it, and admits exactly MAX_QUEUE_DEPTH across replicas', async () => {
    const history = [
      { role: 'system', content: instructions },
      { role: 'user', content: 'First question?' },
    ];
    const first = await readJson<ChatCompletion>(await post({ messages: history, max_tokens: 4, temperature: 0 }));
    history.push({ role: 'assistant', content: first.choices[0]!.message.content ?? '' });
    history.push({ role: 'user', content: 'And the next one?' });
    const second = await readJson<ChatCompletion>(await post({ messages: history, max_tokens: 4, temperature: 0 }));
    expect(second.usage.prompt_tokens_details?.cached_tokens ?? 0).toBeGreaterThan(0);
    expect(await metric(platform.baseUrl, 'conveyor_prefix_routes_total', 'outcome="hit"')).toBeGreaterThanOrEqual(1);

    // Frozen workers take nothing: every admitted request waits, and the rest are refused at once.
    for (const worker of platform.workers) worker.proc.kill('SIGSTOP');
    const replies = Array.from({ length: 30 }, (_, i) =>
      post({ max_tokens: 2 }, undefined, i % 2 ? secondUrl : platform.baseUrl),
    );
    const refused: Response[] = [];
    const admitted: Promise<Response>[] = [];
    try {
      await Promise.all(
        replies.map(async (reply) => {
          const res = await Promise.race([reply, new Promise<null>((r) => setTimeout(() => r(null), 1200))]);
          if (res) refused.push(res);
          else admitted.push(reply);
        }),
      );
    } finally {
      for (const worker of platform.workers) worker.proc.kill('SIGCONT');
    }
    expect(refused.map((r) => r.status)).toEqual(Array(30 - MAX_QUEUE_DEPTH).fill(429));
    expect((await Promise.all(admitted)).map((r) => r.status)).toEqual(Array(MAX_QUEUE_DEPTH).fill(200));
  });

  it('follows each failover of the busiest shard on its own: nothing accepted is lost, the batch completes once per line', async () => {
    const pids = [platform.api!, ...platform.workers].map((p) => p.proc.pid);
    // Files: the batch's input goes up, its output comes back.
    const ids = Array.from({ length: BATCH_LINES }, (_, i) => `line-${i}`);
    const batch = await submitBatch(client, jsonl(ids.map((id) => chatLine(id, { max_tokens: 32 }))));
    const uploaded = await client.files.retrieve(batch.input_file_id);
    expect(uploaded.bytes).toBeGreaterThan(0);

    const load = new LoadDriver(
      platform.baseUrl,
      MODEL,
      LANES + PROBES,
      (lane, i) => (lane < LANES ? LENGTHS[(lane + i) % LENGTHS.length]! : PROBE_LENGTH),
      HANG_BOUND_MS,
    );
    const kills: FailoverRun[] = [];
    try {
      for (const wait of KILL_AFTER_MS) {
        await new Promise((r) => setTimeout(r, wait));
        const at = Date.now();
        const killed = await cluster.killPrimaryOf(busiest());
        await cluster.waitFailover(killed, busiest(), 15_000);
        const failoverMs = Date.now() - at;
        kills.push({ at, failoverMs, serviceGapMs: await load.serviceBack(at, HANG_BOUND_MS) });
        // As an operator would: the old primary comes back, as a replica of the one that replaced it.
        cluster.rejoin(killed);
        await cluster.waitHealthy(20_000);
      }
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      await load.stop();
    }

    const final = await finishedBatch(client, batch.id);

    const report = load.failoverReport(kills, final);
    console.log(`Cluster failover under load: ${JSON.stringify(report)}`);

    expect(load.records.filter((r) => r.outcome === 'bad' || r.outcome === 'hung')).toEqual([]);
    expect(report.lost).toBe(0);
    expect(report.ok).toBeGreaterThan(0);
    // A bound, not a target (the report above prints the gaps; bench/ measures them): service that never
    // came back, or only at a request's deadline, fails; a loaded machine's slower reconnects do not.
    for (const k of kills) expect(k.serviceGapMs - k.failoverMs).toBeLessThan(SERVICE_BACK_MS);

    expect(final?.status).toBe('completed');
    expect(final?.request_counts).toEqual({ total: BATCH_LINES, completed: BATCH_LINES, failed: 0 });
    const output = await fileLines(client, final?.output_file_id);
    expect(output.map((l) => l.custom_id).sort()).toEqual([...ids].sort());

    // No process was restarted, and none printed a line that is not JSON.
    expect([platform.api!, ...platform.workers].map((p) => p.proc.pid)).toEqual(pids);
    for (const p of [platform.api!, ...platform.workers]) {
      expect(p.proc.exitCode).toBeNull();
      expect(nonJsonLines(p)).toEqual([]);
    }
    // Every heartbeat was old after each failover, yet no live worker was taken for dead.
    for (const w of platform.workers) expect(w.output.join('')).not.toContain('Took over');
  }, 120_000);

  it('enqueues again a job the promoted replica never received, so its client is answered', async () => {
    await cluster.waitHealthy(20_000);
    let waiting: Promise<RequestRecord> | undefined;
    // Frozen workers take nothing: the request waits in the queue until after the failover.
    for (const worker of platform.workers) worker.proc.kill('SIGSTOP');
    try {
      await cluster.cutReplication(busiest());
      // Acknowledged by the primary only: the replica about to replace it never hears of this job.
      waiting = chatRequest(platform.baseUrl, MODEL, false, 8, HANG_BOUND_MS);
      await waitFor(
        async () => ((await queue.getJobCountByTypes('waiting', 'prioritized')) === 1 ? true : undefined),
        EVENTUALLY_MS,
        'the job queued',
      );
      const killed = await cluster.killPrimaryOf(busiest());
      await cluster.waitFailover(killed, busiest(), 20_000);
      await cluster.healReplication();
    } finally {
      for (const worker of platform.workers) worker.proc.kill('SIGCONT');
    }
    if (!waiting) throw new Error('the request was not sent');
    const request = await waiting;
    console.log(
      `Lost job: the request ended ${request.outcome} ${request.endedAt - request.sentAt} ms after it was sent`,
    );
    expect(platform.api!.output.join('')).toContain('gone from Redis before any worker ran it');
    expect(request.outcome).toBe('ok');
  }, 60_000);
});
