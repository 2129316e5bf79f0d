import { hostname } from 'node:os';
import { Queue, type Job } from 'bullmq';
import { deploymentQueueName } from '@conveyor/queue';
import { EVENTUALLY_MS, SseReader } from './support/jobs.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';

const MODEL = 'conveyor-tiny';
const messages = [{ role: 'user', content: 'Tell me a long story.' }];

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`condition not met in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('several workers, and clients that leave', () => {
  let platform: TestPlatform;
  let queue: Queue;

  const post = (body: object, signal?: AbortSignal) =>
    fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages, temperature: 0, ...body }),
      signal,
    });

  const stateOf = async (id: string) => (await queue.getJob(id))?.getState();

  beforeAll(async () => {
    // One sequence per worker: a cancelled job that kept its sequence would block the next request.
    platform = await TestPlatform.start({ workers: 2, env: { PARALLEL: '1' } });
    queue = new Queue(deploymentQueueName(MODEL), { connection: { url: REDIS_URL }, prefix: platform.prefix });
  });

  afterAll(async () => {
    await queue?.close();
    await platform?.stop();
  });

  it('spreads concurrent requests over both workers', async () => {
    const replies = await Promise.all(Array.from({ length: 6 }, () => post({ max_tokens: 48 })));
    expect(replies.map((r) => r.status)).toEqual(Array(6).fill(200));
    await Promise.all(replies.map((r) => r.json()));
    // The reply ends a moment before BullMQ records the job as completed.
    const done: Job[] = await waitFor(async () => {
      const jobs = await queue.getCompleted();
      return jobs.length === 6 ? jobs : undefined;
    }, EVENTUALLY_MS);
    const workers = new Set(done.map((j) => j.processedBy));
    expect(workers.size).toBe(2);
  });

  it('shares the load over three workers, and the others keep serving when one is killed', async () => {
    const third = await platform.startWorker();
    const owner = (p: { proc: { pid?: number } }) => `${hostname()}:${p.proc.pid}`;
    const round = async (n: number) => {
      const seen = new Set((await queue.getCompleted()).map((j) => j.id));
      const replies = await Promise.all(Array.from({ length: n }, () => post({ max_tokens: 48 })));
      expect(replies.map((r) => r.status)).toEqual(Array(n).fill(200));
      await Promise.all(replies.map((r) => r.json()));
      const fresh = await waitFor(async () => {
        const jobs = (await queue.getCompleted()).filter((j) => !seen.has(j.id));
        return jobs.length === n ? jobs : undefined;
      }, EVENTUALLY_MS);
      return new Set(fresh.map((j) => j.processedBy));
    };

    expect(await round(9)).toEqual(new Set(platform.workers.map(owner)));

    const victim = platform.workers[0];
    victim.proc.kill('SIGKILL');
    await new Promise((r) => victim.proc.once('exit', r));
    const survivors = await round(6);
    expect(survivors.has(owner(victim))).toBe(false);
    expect(survivors.has(owner(third))).toBe(true);
    expect(survivors.size).toBe(2);
  });

  it('stops generating when a streaming client disconnects, and frees the sequence', async () => {
    const controller = new AbortController();
    const res = await post({ max_tokens: 3000, stream: true, ignore_eos: true }, controller.signal);
    const sse = new SseReader(res.body!.getReader());
    await sse.next(1);
    const requestId = (JSON.parse(sse.payloads[0]).id as string).replace('chatcmpl-', '');
    controller.abort();

    const state = await waitFor(
      async () => ((await stateOf(requestId)) === 'failed' ? 'failed' : undefined),
      EVENTUALLY_MS,
    );
    // Failed, as cancelled, long before its 3,000 tokens: however slow the machine, it stopped generating.
    expect(state).toBe('failed');
    expect((await queue.getJob(requestId))!.failedReason).toMatch(/cancelled/);

    // Both single-sequence workers must take new work at once.
    const next = await Promise.all([post({ max_tokens: 4 }), post({ max_tokens: 4 })]);
    expect(next.map((r) => r.status)).toEqual([200, 200]);
  });

  it('stops generating when a sync client disconnects', async () => {
    const controller = new AbortController();
    const marker = `sync-cancel-${Date.now()}`;
    const pending = post(
      { max_tokens: 3000, ignore_eos: true, messages: [{ role: 'user', content: marker }] },
      controller.signal,
    ).catch((err: Error) => err);
    const job = await waitFor(
      async () => (await queue.getActive()).find((j) => j.data.messages[0].content === marker),
      EVENTUALLY_MS,
    );
    controller.abort();
    expect(await pending).toMatchObject({ name: 'AbortError' });
    await waitFor(async () => ((await stateOf(job.id!)) === 'failed' ? true : undefined), EVENTUALLY_MS);
    expect((await queue.getJob(job.id!))!.failedReason).toMatch(/cancelled/);
  });
});
