import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { ChatCompletionChunk } from '@conveyor/openai';
import { deploymentQueueName, replayReply } from '@conveyor/queue';
import { SseReader, holderOf, replyEvents, takeoverStartedAt, waitFor } from './support/jobs.js';
import { REDIS_URL, TestPlatform, exited, type ManagedProcess } from './support/platform.js';

const MODEL = 'conveyor-tiny';
const MAX_TOKENS = 2400;
/** Tokens generated before the kill: the continued reply's prompt then holds a few thousand tokens of text sent. */
const KILL_AFTER = 1500;
/**
 * From the next worker's start to the reply's first new text: its prompt going in beside other streams. A
 * second or less on the 2-core VM; generous, as machines under other work are slower.
 */
const NEW_TEXT_BOUND_MS = 8000;

/**
 * What the client of a reply whose worker is killed sees: one stream carrying the whole reply, nothing repeated
 * or lost, and new text soon after another worker takes the job over, though that worker streams other
 * replies meanwhile and the reply's prompt now holds all the text already sent.
 */
describe('takeover: what the client of a killed worker sees', () => {
  let platform: TestPlatform;
  let queue: Queue;
  let redis: Redis;
  const stream = (content: string, maxTokens: number, signal?: AbortSignal) =>
    fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: 'user', content }],
        ignore_eos: true,
        max_tokens: maxTokens,
        stream: true,
        stream_options: { include_usage: true },
      }),
      signal,
    });

  beforeAll(async () => {
    // Room on either worker for every reply at once, so the one left takes the killed one's over at once.
    platform = await TestPlatform.start({ workers: 2, env: { PARALLEL: '4' } });
    queue = new Queue(deploymentQueueName(MODEL), { connection: { url: REDIS_URL }, prefix: platform.prefix });
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    redis?.disconnect();
    await queue?.close();
    await platform?.stop();
  });

  const takeoverAt = (requestId: string) => takeoverStartedAt(redis, platform.prefix, requestId);

  it('a worker killed -9 well into a reply, beside other streams: new text soon after the takeover, the text whole and once', async () => {
    // Other replies stream on both workers throughout.
    const others = new AbortController();
    const background = [1, 2, 3].map((i) =>
      stream(`Other ${i}.`, 4000, others.signal)
        .then((res) => res.text())
        .catch(() => undefined),
    );
    const res = await stream('Keep talking.', MAX_TOKENS);
    const sse = new SseReader(res.body!.getReader());
    // Read as it comes, each payload's arrival noted.
    const arrivals: number[] = [];
    const reading = (async () => {
      while (await sse.next(1)) while (arrivals.length < sse.payloads.length) arrivals.push(Date.now());
    })();
    await waitFor(async () => (sse.payloads.length ? true : undefined), 30_000, 'the first chunk');
    const requestId = (JSON.parse(sse.payloads[0]!).id as string).slice('chatcmpl-'.length);
    const holder: ManagedProcess = await holderOf(queue, platform.workers, requestId);
    await waitFor(
      async () =>
        replayReply(await replyEvents(REDIS_URL, platform.prefix, requestId)).tokens >= KILL_AFTER ? true : undefined,
      60_000,
      `${KILL_AFTER} tokens generated`,
    );
    holder.proc.kill('SIGKILL');
    await exited(holder);
    const resumedAt = await takeoverAt(requestId);
    await reading;
    others.abort();
    await Promise.all(background);

    expect(sse.payloads.at(-1)).toBe('[DONE]');
    expect(sse.payloads.filter((p) => p === '[DONE]')).toHaveLength(1);
    const chunks = sse.payloads.slice(0, -1).map((p) => JSON.parse(p) as ChatCompletionChunk & { error?: unknown });
    expect(chunks.filter((c) => c.error)).toEqual([]);
    expect(chunks.filter((c) => c.choices[0]?.delta?.role === 'assistant')).toHaveLength(1);
    expect(chunks.at(-1)!.usage?.completion_tokens).toBe(MAX_TOKENS);
    const texts = chunks.map((c) => c.choices[0]?.delta?.content ?? '');
    const events = await replyEvents(REDIS_URL, platform.prefix, requestId);
    expect(events.some((e) => e.type === 'start' && e.attempt === 2 && e.resumed)).toBe(true);
    // The whole reply once: what its events say, the killed attempt's text then the next one's.
    const sent = replayReply(events.filter((e) => e.attempt === 1)).text;
    expect(sent.length).toBeGreaterThan(1000);
    expect(texts.join('')).toBe(replayReply(events).text);
    expect(texts.join('').startsWith(sent)).toBe(true);

    // The first chunk past the killed attempt's text is the new attempt's first.
    let length = 0;
    const firstNew = texts.findIndex((t) => (length += t.length) > sent.length);
    const newAfter = arrivals[firstNew]! - resumedAt;
    process.stdout.write(
      `${sent.length} characters sent before the kill; new text ${(newAfter / 1000).toFixed(2)} s after the takeover\n`,
    );
    expect(newAfter).toBeLessThan(NEW_TEXT_BOUND_MS);
  }, 300_000);
});
