import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { parseReplyEntry, type ReplyEvent } from '@conveyor/queue';

const REPLY_TTL_MS = 10 * 60 * 1000;
import { RedisReplyPublisher } from './redis-reply-publisher.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('RedisReplyPublisher against real Redis', () => {
  let redis: Redis;
  const key = `unit-${randomBytes(6).toString('hex')}:reply:1`;

  beforeAll(() => {
    // As in the worker: auto-pipelining on, which is what could reorder a MULTI ahead of plain writes.
    redis = new Redis(url, { enableAutoPipelining: true });
  });

  afterAll(async () => {
    await redis.del(key);
    redis.disconnect();
  });

  const read = async (): Promise<ReplyEvent[]> =>
    (await redis.xrange(key, '-', '+')).flatMap(([, fields]) => parseReplyEntry(fields));

  it('writes start, coalesced text and end in order, numbered from 0, with a TTL', async () => {
    const publisher = new RedisReplyPublisher(redis, key, 2, REPLY_TTL_MS);
    publisher.start(11, false);
    publisher.output({ choice: 0, text: 'Hel' });
    publisher.output({ choice: 0, text: 'lo' });
    await new Promise((r) => setImmediate(r));
    publisher.output({ choice: 0, text: ' world' });
    // The last text is still pending when the reply ends: it must land before the end event.
    await publisher.end(['length'], { promptTokens: 11, completionTokens: 3 });

    const events = await read();
    expect(events).toEqual([
      { type: 'start', attempt: 2, seq: 0, promptTokens: 11, resumed: false },
      { type: 'delta', attempt: 2, seq: 1, text: 'Hello' },
      { type: 'delta', attempt: 2, seq: 2, text: ' world' },
      { type: 'end', attempt: 2, seq: 3, finishReason: 'length', usage: { promptTokens: 11, completionTokens: 3 } },
    ]);
    // The text still pending at the end shares the end's entry, so a blocked reader wakes once for both.
    const entries = await redis.xrange(key, '-', '+');
    expect(entries.map(([, fields]) => parseReplyEntry(fields).map((e) => e.type))).toEqual([
      ['start'],
      ['delta'],
      ['delta', 'end'],
    ]);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(REPLY_TTL_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(REPLY_TTL_MS);
  });

  it('reports a failure as an error event after the text so far', async () => {
    await redis.del(key);
    const publisher = new RedisReplyPublisher(redis, key, 1, REPLY_TTL_MS);
    publisher.start(4, false);
    publisher.output({ choice: 0, text: 'partial' });
    await publisher.fail(400, 'context_length_exceeded', 'too long');
    const events = await read();
    expect(events.map((e) => e.type)).toEqual(['start', 'delta', 'error']);
    expect(events[2]).toMatchObject({ status: 400, code: 'context_length_exceeded', seq: 2 });
  });

  it('names the field at fault in an error event when the engine names one', async () => {
    await redis.del(key);
    const publisher = new RedisReplyPublisher(redis, key, 1, REPLY_TTL_MS);
    await publisher.fail(400, 'invalid_value', 'The prompt is empty.', 'prompt');
    expect(await read()).toMatchObject([{ type: 'error', status: 400, code: 'invalid_value', param: 'prompt' }]);
  });

  it('writes nothing after a failed write, so a reply never has a hole when Redis comes back', async () => {
    await redis.del(key);
    // A connection of its own that fails commands while it is down, as one does once its retries are spent.
    const flaky = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
    flaky.on('error', () => undefined);
    await flaky.connect();
    try {
      const publisher = new RedisReplyPublisher(flaky, key, 1, REPLY_TTL_MS);
      publisher.start(4, false);
      publisher.output({ choice: 0, text: 'before' });
      await new Promise((r) => setTimeout(r, 20));
      flaky.disconnect();
      publisher.output({ choice: 0, text: 'lost' });
      await new Promise((r) => setTimeout(r, 20));
      await flaky.connect();
      publisher.output({ choice: 0, text: 'after' });
      await new Promise((r) => setTimeout(r, 20));
      await expect(publisher.end(['length'], { promptTokens: 4, completionTokens: 3 })).rejects.toThrow();
      // What the client read stops where the first write failed; the job's retry continues from there.
      const events = await read();
      expect(events.map((e) => (e.type === 'delta' ? e.text : e.type))).toEqual(['start', 'before']);
    } finally {
      flaky.disconnect();
    }
  });

  it('coalesces each choice on its own, keeping reasoning, text and tool call pieces in reply order', async () => {
    await redis.del(key);
    const publisher = new RedisReplyPublisher(redis, key, 1, REPLY_TTL_MS);
    publisher.start(4, false);
    publisher.output({ choice: 1, text: 'b' });
    publisher.output({ choice: 0, reasoning: 'hm' });
    publisher.output({ choice: 0, text: 'a' });
    publisher.output({ choice: 0, toolCall: { index: 0, id: 'call_1', name: 'f', arguments: '' } });
    publisher.output({ choice: 0, toolCall: { index: 0, arguments: '{"x":' } });
    publisher.output({ choice: 0, toolCall: { index: 0, arguments: '1}' } });
    publisher.output({ choice: 1, reasoning: 'late' });
    await publisher.end(['tool_calls', 'stop'], { promptTokens: 4, completionTokens: 9 });
    const events = await read();
    expect(events.slice(1)).toEqual([
      { type: 'delta', attempt: 1, seq: 1, choice: 1, text: 'b' },
      {
        type: 'delta',
        attempt: 1,
        seq: 2,
        text: 'a',
        reasoning: 'hm',
        toolCall: { index: 0, id: 'call_1', name: 'f', arguments: '{"x":1}' },
      },
      { type: 'delta', attempt: 1, seq: 3, choice: 1, text: '', reasoning: 'late' },
      {
        type: 'end',
        attempt: 1,
        seq: 4,
        finishReason: 'tool_calls',
        finishReasons: ['tool_calls', 'stop'],
        usage: { promptTokens: 4, completionTokens: 9 },
      },
    ]);
  });
});
