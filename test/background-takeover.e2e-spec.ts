import { Queue } from 'bullmq';
import type { ResponseObject } from '@conveyor/openai';
import { deploymentQueueName, responseLeaseKey } from '@conveyor/queue';
import { Redis } from 'ioredis';
import { readJson } from './support/json.js';
import { EVENTUALLY_MS, waitFor } from './support/jobs.js';
import { REDIS_URL, TestPlatform, exited, type ManagedProcess } from './support/platform.js';

const MODEL = 'conveyor-tiny';
/** Long enough to be running when its replica is killed; ignore_eos keeps it from ending early. */
const BODY = { model: MODEL, input: 'Tell me a long story.', max_output_tokens: 400, temperature: 0, ignore_eos: true };

/** Kills a replica as a crash would: SIGKILL to its whole process group, nothing handed over. */
async function crash(api: ManagedProcess): Promise<void> {
  process.kill(-api.proc.pid!, 'SIGKILL');
  await exited(api);
}

describe('a background response outlives the API replica that followed it', () => {
  let platform: TestPlatform;
  let queue: Queue;
  let redis: Redis;
  /** The whole reply, as the same greedy request made synchronously gives it. */
  let expected: ResponseObject;

  const post = (baseUrl: string, body: unknown) =>
    fetch(`${baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const get = async (baseUrl: string, id: string) =>
    readJson<ResponseObject>(await fetch(`${baseUrl}/v1/responses/${id}`));

  /** Polls the surviving replica until the response ends. */
  async function pollToEnd(id: string, timeoutMs = 60_000): Promise<ResponseObject> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const polled = await get(platform.baseUrl, id);
      if (polled.status !== 'queued' && polled.status !== 'in_progress') return polled;
      if (Date.now() > until) throw new Error(`${id} still ${polled.status} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const workers = (signal: NodeJS.Signals) => {
    for (const w of platform.workers) process.kill(-w.proc.pid!, signal);
  };

  beforeAll(async () => {
    platform = await TestPlatform.start();
    queue = new Queue(deploymentQueueName(MODEL), { connection: { url: REDIS_URL }, prefix: platform.prefix });
    redis = new Redis(REDIS_URL);
    const res = await post(platform.baseUrl, BODY);
    expect(res.status).toBe(200);
    expected = await readJson<ResponseObject>(res);
    expect(expected).toMatchObject({ status: 'incomplete', usage: { output_tokens: 400 } });
  }, 90_000);

  afterAll(async () => {
    workers('SIGCONT');
    await queue?.close();
    redis?.disconnect();
    await platform?.stop();
  });

  /** The same response, whole: its text and usage as the synchronous one, under its own id. */
  function expectWhole(ended: ResponseObject, id: string): void {
    expect(ended).toMatchObject({
      id,
      status: 'incomplete',
      background: true,
      incomplete_details: { reason: 'max_output_tokens' },
      // The prompt cache may hold more of the prompt the second time: only what was cached differs.
      usage: { ...expected.usage, input_tokens_details: expect.anything() },
      error: null,
    });
    expect(ended.output).toEqual([
      expect.objectContaining({ content: [expect.objectContaining({ text: textOf(expected) })] }),
    ]);
  }

  it('killed while its job is queued: another replica takes it over and stores its end, whole', async () => {
    const victim = await platform.startExtraApi();
    workers('SIGSTOP');
    const queued = await readJson<ResponseObject>(await post(victim.baseUrl, { ...BODY, background: true }));
    expect(queued.status).toBe('queued');
    const lease = responseLeaseKey(platform.prefix, queued.id);
    const firstHolder = await redis.get(lease);
    expect(firstHolder).not.toBeNull();
    await crash(victim.api);
    // Polled while its lease lapses, and after: the survivor takes the lease over, then the workers wake.
    const until = Date.now() + EVENTUALLY_MS;
    for (;;) {
      expect((await get(platform.baseUrl, queued.id)).status).toBe('queued');
      const holder = await redis.get(lease);
      if (holder !== null && holder !== firstHolder) break;
      expect(Date.now()).toBeLessThan(until);
      await new Promise((r) => setTimeout(r, 200));
    }
    workers('SIGCONT');
    expectWhole(await pollToEnd(queued.id), queued.id);
  }, 90_000);

  it('killed while it runs: another replica takes it over and stores its end, whole', async () => {
    const victim = await platform.startExtraApi();
    const queued = await readJson<ResponseObject>(await post(victim.baseUrl, { ...BODY, background: true }));
    let polled = queued;
    while (polled.status === 'queued') {
      await new Promise((r) => setTimeout(r, 20));
      polled = await get(victim.baseUrl, queued.id);
    }
    expect(polled.status).toBe('in_progress');
    await crash(victim.api);
    expectWhole(await pollToEnd(queued.id), queued.id);
    expect(platform.api!.output.join('')).toContain(`Taking over background response ${queued.id}`);
  }, 90_000);

  it('shut down gracefully while it runs: its lease is given up, and another replica takes over at once', async () => {
    const victim = await platform.startExtraApi();
    const body = { ...BODY, max_output_tokens: 1500, background: true };
    const queued = await readJson<ResponseObject>(await post(victim.baseUrl, body));
    let polled = queued;
    while (polled.status === 'queued') {
      await new Promise((r) => setTimeout(r, 20));
      polled = await get(victim.baseUrl, queued.id);
    }
    const lease = responseLeaseKey(platform.prefix, queued.id);
    const victimHolds = await redis.get(lease);
    expect(victimHolds).not.toBeNull();
    victim.api.proc.kill('SIGTERM');
    expect(await exited(victim.api)).toBe(0);
    expect(victim.api.output.join('')).toMatch(/Handed over 1 background response/);
    // The lease given up, not left to lapse: so the first poll after the hand-over takes it over, however
    // long a loaded machine takes to get there.
    expect(await redis.get(lease)).not.toBe(victimHolds);
    expect((await get(platform.baseUrl, queued.id)).status).toBe('in_progress');
    const taking = `Taking over background response ${queued.id}`;
    await waitFor(
      async () => (platform.api!.output.join('').includes(taking) ? true : undefined),
      EVENTUALLY_MS,
      'the survivor to take the response over',
    );
    const ended = await pollToEnd(queued.id);
    expect(ended).toMatchObject({ status: 'incomplete', usage: { output_tokens: 1500 } });
  }, 90_000);

  it('whose reply expired before anyone took it over: stored as failed, with a clear message', async () => {
    const victim = await platform.startExtraApi();
    workers('SIGSTOP');
    const queued = await readJson<ResponseObject>(await post(victim.baseUrl, { ...BODY, background: true }));
    await crash(victim.api);
    // As if its job had long expired from Redis.
    await queue.remove(queued.id.slice('resp_'.length));
    workers('SIGCONT');
    const ended = await pollToEnd(queued.id, 30_000);
    expect(ended).toMatchObject({ status: 'failed', error: { message: expect.stringMatching(/expired/) } });
  }, 60_000);
});

const textOf = (response: ResponseObject): string =>
  response.output
    .flatMap((item) => (item.type === 'message' ? item.content : []))
    .map((part) => ('text' in part ? part.text : ''))
    .join('');
