import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformConfig } from '@conveyor/config';
import { decodeReplyGroup, decodeReplyRecord, replyInboxKey, replyRecordKey, type ReplyEvent } from '@conveyor/queue';
import { untilConnected } from '../../../../test/support/connected.js';
import { EVENTUALLY_MS, waitFor } from '../../../../test/support/jobs.js';
import { CommandConnection } from '@conveyor/redis';
import { WORKER_SCRIPTS } from '../worker-redis.js';
import { RedisReplyOutbox } from './redis-reply.outbox.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const REPLY_TTL_MS = 10 * 60 * 1000;

describe('RedisReplyOutbox against real Redis', () => {
  const prefix = `unit-${randomBytes(6).toString('hex')}`;
  const config = {
    redis: { url, prefix, replyTtlMs: REPLY_TTL_MS },
    api: { requestTimeoutMs: 60_000 },
  } as PlatformConfig;
  const inbox = replyInboxKey(prefix, 'replica-1');
  let redis: Redis;
  let outbox: RedisReplyOutbox;

  beforeAll(async () => {
    // As in the worker: auto-pipelining on, which is what could reorder a MULTI ahead of plain writes.
    redis = new Redis(url, { enableAutoPipelining: true });
    outbox = new RedisReplyOutbox(config, new CommandConnection(redis, WORKER_SCRIPTS));
    await untilConnected(() => redis.ping());
  });

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  /** Each inbox entry's replies, and what each reply's field held. */
  const entries = async (): Promise<Record<string, ReplyEvent[]>[]> =>
    (await redis.xrange(inbox, '-', '+')).map(([, fields]) => {
      const byRequest: Record<string, ReplyEvent[]> = {};
      for (let i = 0; i + 1 < fields.length; i += 2) byRequest[fields[i]!] = decodeReplyGroup(fields[i + 1]!);
      return byRequest;
    });
  const eventsOf = async (requestId: string) => (await entries()).flatMap((e) => e[requestId] ?? []);
  const turn = () => new Promise((r) => setImmediate(r));

  it('writes start, the first output at the end of its round, and end in order, numbered from 0, and a record', async () => {
    const sink = outbox.open({ inbox, requestId: 'r1' }, 2, []);
    sink.start(11, false);
    // One round's text is one delta, and the reply's first is written at the end of its round.
    sink.output({ choice: 0, text: 'Hel' });
    sink.output({ choice: 0, text: 'lo' });
    await turn();
    sink.output({ choice: 0, text: ' world' });
    await sink.end({ finishReasons: ['length'], usage: { promptTokens: 11, completionTokens: 3 } });
    const written: ReplyEvent[] = [
      { type: 'start', attempt: 2, seq: 0, promptTokens: 11, resumed: false },
      { type: 'delta', attempt: 2, seq: 1, text: 'Hello' },
      { type: 'delta', attempt: 2, seq: 2, text: ' world' },
      { type: 'end', attempt: 2, seq: 3, finishReason: 'length', usage: { promptTokens: 11, completionTokens: 3 } },
    ];
    expect(await eventsOf('r1')).toEqual(written);
    const record = await redis.get(replyRecordKey(prefix, 'r1'));
    expect(decodeReplyRecord(record!)).toEqual(written);
    const ttl = await redis.pttl(replyRecordKey(prefix, 'r1'));
    expect(ttl).toBeGreaterThan(REPLY_TTL_MS - 60_000);
    // The history a retry or a resume reads is the record once the reply has ended.
    expect(await outbox.history({ inbox, requestId: 'r1' }, Date.now() - 10_000)).toEqual(written);
  });

  it('writes the stop sequence that ended a reply in its end event and record, and nothing when none did', async () => {
    const usage = { promptTokens: 5, completionTokens: 2 };
    const stopped = outbox.open({ inbox, requestId: 'r-stop' }, 1, []);
    stopped.start(5, false);
    stopped.output({ choice: 0, text: 'Hi' });
    await stopped.end({ finishReasons: ['stop'], usage, stopSequences: ['END'] });
    const end = { type: 'end', attempt: 1, seq: 2, finishReason: 'stop', usage };
    expect((await eventsOf('r-stop')).at(-1)).toEqual({ ...end, stopSequences: ['END'] });
    const record = decodeReplyRecord((await redis.get(replyRecordKey(prefix, 'r-stop')))!);
    expect(record.at(-1)).toEqual({ ...end, stopSequences: ['END'] });

    const ended = outbox.open({ inbox, requestId: 'r-eos' }, 1, []);
    ended.start(5, false);
    ended.output({ choice: 0, text: 'Hi' });
    await ended.end({ finishReasons: ['stop'], usage, stopSequences: [null] });
    expect((await eventsOf('r-eos')).at(-1)).toEqual(end);
  });

  it('writes the events of every reply of a flush as one entry, a field per reply', async () => {
    await redis.del(inbox);
    const sinks = ['a', 'b', 'c'].map((id) => outbox.open({ inbox, requestId: id }, 1, []));
    sinks.forEach((s) => s.start(3, false));
    // A first token each, written at the end of its round; rounds come about 20 ms apart.
    sinks.forEach((s) => s.output({ choice: 0, text: 'w', tokens: 1 }));
    await new Promise((r) => setTimeout(r, 20));
    // Two rounds of one token each: written together at the end of the second.
    for (const round of ['x', 'y']) {
      sinks.forEach((s) => s.output({ choice: 0, text: round, tokens: round === 'x' ? 2 : 3 }));
      await turn();
    }
    await turn();
    const written = await entries();
    // Each flush is one entry carrying all three replies. On a loaded machine the wait for a next round
    // (MAX_WAIT_MS) can run out between x and y, and they are written in two flushes instead of one.
    expect(written.length === 2 || written.length === 3).toBe(true);
    for (const entry of written) expect(Object.keys(entry).sort()).toEqual(['a', 'b', 'c']);
    expect(written[0]!.a).toEqual([
      { type: 'start', attempt: 1, seq: 0, promptTokens: 3, resumed: false },
      { type: 'delta', attempt: 1, seq: 1, text: 'w', tokens: 1 },
    ]);
    if (written.length === 2)
      expect(written[1]!.a).toEqual([{ type: 'delta', attempt: 1, seq: 2, text: 'xy', tokens: 3 }]);
    else
      expect(written.slice(1).map((entry) => entry.a!.map((e) => e.type === 'delta' && e.text))).toEqual([
        ['x'],
        ['y'],
      ]);
    await Promise.all(
      sinks.map((s) => s.end({ finishReasons: ['stop'], usage: { promptTokens: 3, completionTokens: 3 } })),
    );
    // Ending in one round, the three ends share one entry too.
    expect(await entries()).toHaveLength(written.length + 1);
    // Before a reply ends, its history is its fields among the inbox's entries.
    const running = outbox.open({ inbox, requestId: 'd' }, 1, []);
    running.start(1, false);
    running.output({ choice: 0, text: 'so far', tokens: 2 });
    const history = await waitFor(
      async () => {
        const events = await outbox.history({ inbox, requestId: 'd' }, Date.now() - 10_000);
        return events.length >= 2 ? events : undefined;
      },
      EVENTUALLY_MS,
      "the running reply's first output written",
    );
    expect(history.map((e) => e.type)).toEqual(['start', 'delta']);
  });

  it('reports a failure as an error event after the text so far, naming the field at fault', async () => {
    const sink = outbox.open({ inbox, requestId: 'r2' }, 1, []);
    sink.start(4, false);
    sink.output({ choice: 0, text: 'partial' });
    await sink.fail(400, 'context_length_exceeded', 'too long', 'messages');
    const events = await eventsOf('r2');
    expect(events.map((e) => e.type)).toEqual(['start', 'delta', 'error']);
    expect(events[2]).toMatchObject({ status: 400, code: 'context_length_exceeded', seq: 2, param: 'messages' });
  });

  it('writes nothing after a failed write, so a reply never has a hole when Redis comes back', async () => {
    // A connection of its own that fails commands while it is down, as one does once its retries are spent.
    const flaky = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
    flaky.on('error', () => undefined);
    await flaky.connect();
    try {
      const sink = new RedisReplyOutbox(config, new CommandConnection(flaky, WORKER_SCRIPTS)).open(
        { inbox, requestId: 'r3' },
        1,
        [],
      );
      // Each flush of the reply is one XADD on the connection: counted, so the test moves on when one
      // has been answered rather than after a time a loaded machine may overrun.
      const xadds = jest.spyOn(flaky, 'xadd');
      const answered = (n: number) =>
        waitFor(async () => (xadds.mock.results.length >= n ? true : undefined), EVENTUALLY_MS, `flush ${n} sent`).then(
          () => (xadds.mock.results[n - 1]!.value as Promise<unknown>).catch(() => undefined),
        );
      sink.start(4, false);
      sink.output({ choice: 0, text: 'before' });
      await answered(1);
      flaky.disconnect();
      sink.output({ choice: 0, text: 'lost' });
      await answered(2);
      await turn();
      await flaky.connect();
      sink.output({ choice: 0, text: 'after' });
      await expect(
        sink.end({ finishReasons: ['length'], usage: { promptTokens: 4, completionTokens: 3 } }),
      ).rejects.toThrow();
      // What the client read stops where the first write failed; the job's retry continues from there.
      expect((await eventsOf('r3')).map((e) => (e.type === 'delta' ? e.text : e.type))).toEqual(['start', 'before']);
      expect(await redis.get(replyRecordKey(prefix, 'r3'))).toBeNull();
    } finally {
      flaky.disconnect();
    }
  });

  it('coalesces each choice on its own, keeping reasoning, text and tool call pieces in reply order', async () => {
    const sink = outbox.open({ inbox, requestId: 'r4' }, 1, []);
    sink.start(4, false);
    sink.output({ choice: 1, text: 'b' });
    sink.output({ choice: 0, reasoning: 'hm' });
    sink.output({ choice: 0, text: 'a' });
    sink.output({ choice: 0, toolCall: { index: 0, id: 'call_1', name: 'f', arguments: '' } });
    sink.output({ choice: 0, toolCall: { index: 0, arguments: '{"x":' } });
    sink.output({ choice: 0, toolCall: { index: 0, arguments: '1}' } });
    sink.output({ choice: 1, reasoning: 'late' });
    await sink.end({ finishReasons: ['tool_calls', 'stop'], usage: { promptTokens: 4, completionTokens: 9 } });
    expect((await eventsOf('r4')).slice(1)).toEqual([
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

  it('writes the calls of one reply as events of their own, each under its index', async () => {
    const sink = outbox.open({ inbox, requestId: 'r4b' }, 1, []);
    sink.start(4, false);
    sink.output({ choice: 0, toolCall: { index: 0, id: 'call_1', name: 'f', arguments: '' } });
    sink.output({ choice: 0, toolCall: { index: 0, arguments: '{}' } });
    sink.output({ choice: 0, toolCall: { index: 1, id: 'call_2', name: 'g', arguments: '{"b":' } });
    sink.output({ choice: 0, toolCall: { index: 1, arguments: '2}' } });
    await sink.end({ finishReasons: ['tool_calls'], usage: { promptTokens: 4, completionTokens: 8 } });
    expect((await eventsOf('r4b')).slice(1, -1)).toEqual([
      { type: 'delta', attempt: 1, seq: 1, text: '', toolCall: { index: 0, id: 'call_1', name: 'f', arguments: '{}' } },
      {
        type: 'delta',
        attempt: 1,
        seq: 2,
        text: '',
        toolCall: { index: 1, id: 'call_2', name: 'g', arguments: '{"b":2}' },
      },
    ]);
  });

  it("records a retried reply as its reader relays it: the earlier attempt's events the fence keeps, then its own", async () => {
    const earlier: ReplyEvent[] = [
      { type: 'start', attempt: 1, seq: 0, promptTokens: 4, resumed: false },
      { type: 'delta', attempt: 1, seq: 1, text: 'Hel', tokens: 1 },
    ];
    const sink = outbox.open({ inbox, requestId: 'r5' }, 2, earlier);
    sink.start(4, true);
    sink.output({ choice: 0, text: 'lo', tokens: 2 });
    await sink.end({ finishReasons: ['stop'], usage: { promptTokens: 4, completionTokens: 2 } });
    const record = decodeReplyRecord((await redis.get(replyRecordKey(prefix, 'r5')))!);
    expect(record.map((e) => `${e.attempt}:${e.type}${e.type === 'delta' ? `:${e.text}` : ''}`)).toEqual([
      '1:start',
      '1:delta:Hel',
      '2:start',
      '2:delta:lo',
      '2:end',
    ]);
  });
});
