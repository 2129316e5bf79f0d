import { describe, expect, it } from '@jest/globals';
import type { ResponseInputItem, ResponseObject } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import type { OutputEvent, ReplyRun } from '../contracts/reply-run.js';
import { ResponseStore, type StoredResponse } from '../repositories/response-store.port.js';
import { ResponseOutcomes, type StartedResponse } from './response-outcomes.service.js';
import { toResponseObject } from './response-events.mapper.js';
import { DEFAULT_ECHO, pendingResponse } from './response.mapper.js';

const who = { id: 'resp_0a1b2c3d-0000-4000-8000-000000000001', model: 'm', created: 100 };
const usage = { promptTokens: 3, completionTokens: 2 };
const start = (resumed = false): OutputEvent => ({ type: 'start', attempt: 1, seq: 0, promptTokens: 3, resumed });
const text = (t: string): OutputEvent => ({ type: 'delta', attempt: 1, seq: 1, text: t });
const end: OutputEvent = { type: 'end', attempt: 1, seq: 2, finishReason: 'stop', usage };

/** The store as its Redis repository keeps it: a finished, failed or cancelled response stays so. */
class MemoryStore extends ResponseStore {
  readonly steps: { status: string; context?: readonly ResponseInputItem[] }[] = [];
  current: ResponseObject | null = null;
  save(record: StoredResponse): Promise<void> {
    this.current = record.response;
    return Promise.resolve();
  }
  get(): Promise<StoredResponse | null> {
    return Promise.resolve(null);
  }
  advance(response: ResponseObject, context?: readonly ResponseInputItem[]): Promise<boolean> {
    if (this.current && !['queued', 'in_progress'].includes(this.current.status)) return Promise.resolve(false);
    this.current = response;
    this.steps.push({ status: response.status, ...(context ? { context } : {}) });
    return Promise.resolve(true);
  }
  delete(): Promise<boolean> {
    return Promise.resolve(false);
  }
}

/** A reply of `events`, then `failure` thrown if given. */
async function* reply(events: OutputEvent[], failure?: Error): ReplyRun['events'] {
  for (const event of events) yield event;
  if (failure) throw failure;
}

function recorded(events: OutputEvent[], failure?: Error, background = false) {
  const store = new MemoryStore();
  const echo = { ...DEFAULT_ECHO, store: true, background };
  const started: StartedResponse = {
    run: { who, events: reply(events, failure), headers: {} },
    echo,
    conversation: [{ role: 'user', content: 'Hi' }],
    stored: true,
    options: {},
  };
  store.current = pendingResponse(who, echo, background ? 'queued' : 'in_progress');
  return { store, recorded: new ResponseOutcomes(store).record(started) };
}

describe('ResponseOutcomes', () => {
  it('stores a gathered reply as the response it returns, with the conversation it ends', async () => {
    const { store, recorded: r } = recorded([start(), text('Hel'), text('lo'), end]);
    const response = await r.drain();
    expect(response).toEqual(
      toResponseObject(who, { choices: [{ index: 0, text: 'Hello', finishReason: 'stop' }], usage }, r.echo),
    );
    expect(store.current).toEqual(response);
    expect(store.steps).toEqual([
      { status: 'completed', context: [{ role: 'user', content: 'Hi' }, ...response.output] },
    ]);
  });

  it('stores a background response in progress when a worker takes it, then its end', async () => {
    const { store, recorded: r } = recorded([start(), text('a'), start(true), text('b'), end], undefined, true);
    expect((await r.drain()).output[0]).toMatchObject({ content: [{ text: 'ab' }] });
    expect(store.steps.map((s) => s.status)).toEqual(['in_progress', 'completed']);
  });

  it('builds only the attempt that started over, as a gathered reply keeps', async () => {
    const { recorded: r } = recorded([start(), text('lost'), start(false), text('kept'), end]);
    expect((await r.drain()).output[0]).toMatchObject({ content: [{ text: 'kept' }] });
  });

  it('stores the error that ended a reply, and throws it to the taker', async () => {
    const failure = OpenAiHttpError.unavailable('The worker went away.');
    const { store, recorded: r } = recorded([start(), text('a')], failure);
    await expect(r.drain()).rejects.toBe(failure);
    expect(store.current).toMatchObject({ status: 'failed', error: { message: 'The worker went away.' } });
  });

  it('stores a reply whose taker stopped early as failed, once closed', async () => {
    const { store, recorded: r } = recorded([start(), text('a'), text('b'), end]);
    await r.run.events.next();
    await r.run.events.next();
    await r.close();
    expect(store.steps.map((s) => s.status)).toEqual(['failed']);
    expect(store.current?.error?.message).toMatch(/ended before the response was complete/);
  });

  it('stores nothing once abandoned: the replica that takes it over stores its end', async () => {
    const { store, recorded: r } = recorded([start(), text('a')], new Error('let go'), true);
    await r.run.events.next();
    r.abandon();
    await expect(r.drain()).rejects.toThrow('let go');
    expect(store.steps.map((s) => s.status)).toEqual(['in_progress']);
  });

  it('saves a response as it is queued, and says when the store failed rather than throwing', async () => {
    const store = new MemoryStore();
    const record = {
      owner: 'k',
      response: pendingResponse(who, DEFAULT_ECHO, 'queued'),
      input: [],
      context: [],
      deployment: 'm',
    };
    expect(await new ResponseOutcomes(store).begin(record)).toBe(true);
    expect(store.current?.status).toBe('queued');
    store.save = () => Promise.reject(new Error('Redis is down'));
    expect(await new ResponseOutcomes(store).begin(record)).toBe(false);
  });

  it('stores a cancel only while the response has not ended', async () => {
    const { store } = recorded([], undefined, true);
    const outcomes = new ResponseOutcomes(store);
    expect(await outcomes.cancelled(store.current!)).toMatchObject({ status: 'cancelled' });
    expect(await outcomes.cancelled(store.current!)).toBeNull();
    expect(store.steps.map((s) => s.status)).toEqual(['cancelled']);
  });
});
