import { describe, it, expect, jest } from '@jest/globals';
import type { ReplyEvent } from '@conveyor/queue';
import { ReplySubscription } from '../contracts/reply-subscription.js';

const delta = (text: string): ReplyEvent => ({ type: 'delta', attempt: 1, seq: 1, text });
const start: ReplyEvent = { type: 'start', attempt: 1, seq: 0, promptTokens: 3, resumed: false };
const end: ReplyEvent = {
  type: 'end',
  attempt: 1,
  seq: 2,
  finishReason: 'stop',
  usage: { promptTokens: 3, completionTokens: 2 },
};

const make = () => {
  const onClose = jest.fn<(sub: ReplySubscription) => void>();
  return { sub: new ReplySubscription('r1', onClose), onClose };
};

describe('ReplySubscription', () => {
  it('is named by its request', () => {
    expect(make().sub.requestId).toBe('r1');
  });

  it('holds live events while what came before them is read, then delivers both in order', async () => {
    const { sub } = make();
    sub.awaitBackfill();
    sub.push([delta('b')]);
    const first = sub.next();
    sub.backfill([start, delta('a')]);
    expect(await first).toEqual({ value: start, done: false });
    expect(await sub.next()).toEqual({ value: delta('a'), done: false });
    expect(await sub.next()).toEqual({ value: delta('b'), done: false });
    sub.push([end]);
    expect(await sub.next()).toEqual({ value: end, done: false });
  });

  it('delivers events pushed before next() in order', async () => {
    const { sub } = make();
    sub.push([start, delta('a')]);
    sub.push([delta('b')]);
    expect(await sub.next()).toEqual({ value: start, done: false });
    expect(await sub.next()).toEqual({ value: delta('a'), done: false });
    expect(await sub.next()).toEqual({ value: delta('b'), done: false });
  });

  it('resolves a pending next() when events arrive later, in order', async () => {
    const { sub } = make();
    const first = sub.next();
    sub.push([start, delta('a')]);
    expect(await first).toEqual({ value: start, done: false });
    expect(await sub.next()).toEqual({ value: delta('a'), done: false });
    const third = sub.next();
    sub.push([end]);
    expect(await third).toEqual({ value: end, done: false });
  });

  it('rejects a pending next() on fail', async () => {
    const { sub } = make();
    const pending = sub.next();
    const error = new Error('deadline');
    sub.fail(error);
    await expect(pending).rejects.toBe(error);
    await expect(sub.next()).rejects.toBe(error);
  });

  it('delivers buffered events before the failure', async () => {
    const { sub } = make();
    sub.push([start, delta('a')]);
    const error = new Error('client left');
    sub.fail(error);
    expect(await sub.next()).toEqual({ value: start, done: false });
    expect(await sub.next()).toEqual({ value: delta('a'), done: false });
    await expect(sub.next()).rejects.toBe(error);
  });

  it('keeps the first failure', async () => {
    const { sub } = make();
    const first = new Error('first');
    sub.fail(first);
    sub.fail(new Error('second'));
    await expect(sub.next()).rejects.toBe(first);
  });

  it('ends a pending next() on close and calls onClose exactly once', async () => {
    const { sub, onClose } = make();
    const pending = sub.next();
    sub.close();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(await sub.next()).toEqual({ value: undefined, done: true });
    sub.close();
    expect(onClose).toHaveBeenCalledTimes(1);
    expect(onClose).toHaveBeenCalledWith(sub);
  });

  it('ignores pushes and failures after close', async () => {
    const { sub } = make();
    sub.close();
    sub.push([delta('late')]);
    sub.fail(new Error('late'));
    expect(await sub.next()).toEqual({ value: undefined, done: true });
  });

  it('works with for await, ending when closed', async () => {
    const { sub, onClose } = make();
    const seen: ReplyEvent[] = [];
    const consumed = (async () => {
      for await (const event of sub) seen.push(event);
    })();
    sub.push([start]);
    await Promise.resolve();
    sub.push([delta('a'), end]);
    setTimeout(() => sub.close(), 0);
    await consumed;
    expect(seen).toEqual([start, delta('a'), end]);
    expect(onClose).toHaveBeenCalledTimes(1);
  });

  it('closes when a for await loop breaks early', async () => {
    const { sub, onClose } = make();
    sub.push([start, delta('a')]);
    for await (const event of sub) {
      expect(event).toEqual(start);
      break;
    }
    expect(onClose).toHaveBeenCalledTimes(1);
  });

  it('throws the failure out of a for await loop', async () => {
    const { sub } = make();
    sub.push([start]);
    const error = new Error('deadline');
    setTimeout(() => sub.fail(error), 0);
    const seen: ReplyEvent[] = [];
    await expect(
      (async () => {
        for await (const event of sub) seen.push(event);
      })(),
    ).rejects.toBe(error);
    expect(seen).toEqual([start]);
  });
});
