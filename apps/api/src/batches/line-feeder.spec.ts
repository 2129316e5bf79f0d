import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { BATCH_SHARE_LAPSE_MS } from '@conveyor/queue';
import { BatchRunnerHarness, startHarness, stopHarness } from '../../../../test/support/batch-runner.js';
import { MODEL, imageRef } from '../../../../test/support/batch-fakes.js';

describe('LineFeeder', () => {
  let h: BatchRunnerHarness;

  beforeEach(() => {
    h = startHarness();
  });
  afterEach(stopHarness);

  it("a batch's window follows its deployment's live sequences: more workers, more lines at once", async () => {
    const id = await h.createBatch(Array.from({ length: 40 }, (_, i) => `r${i}`));
    // 3 live workers of PARALLEL sequences: twice those are fed at once, above BATCH_INFLIGHT (4).
    h.workers.live = 3;
    const driver = h.runner();
    await driver.tick(); // validates
    await driver.tick(); // feeds BATCH_INFLIGHT: the batch's deployment is not known yet
    expect(h.queue.jobs.size).toBe(4);
    await driver.tick(); // known now: the window is its workers' sequences, twice over
    const parallel = h.config.deployments[0]!.parallel;
    expect(h.queue.jobs.size).toBe(Math.min(40, 2 * 3 * parallel));
    // Workers gone: the window falls back to BATCH_INFLIGHT, and nothing more is fed.
    h.workers.live = 0;
    await driver.tick();
    expect(h.queue.jobs.size).toBe(Math.min(40, 2 * 3 * parallel));
    const record = await h.runToEnd(driver, id, 200);
    expect(record).toMatchObject({ status: 'completed', completed: 40 });
  });

  it('stores the images of the lines in flight only, each under its line job, and none is left at the end', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `r${i}`);
    const id = await h.createBatch(ids, true);
    const driver = h.runner();
    await driver.tick(); // validates: nothing is stored
    expect(h.images.jobs.size).toBe(0);
    await driver.tick(); // feeds the window
    expect([...h.images.jobs.values()].map((jobs) => [...jobs])).toEqual(
      [...h.queue.jobs.keys()].map((jobId) => [jobId]),
    );
    expect(h.lines.inflightLines.get(1)?.images).toEqual([imageRef('r0abc').sha256]);
    const record = await h.runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', completed: 10 });
    expect(h.images.peak).toBe(4);
    expect(h.images.jobs.size).toBe(0);
  });

  it('counts the lines not yet queued from validation on, down as they are fed, and forgets them at the end', async () => {
    const id = await h.createBatch(Array.from({ length: 10 }, (_, i) => `r${i}`));
    const driver = h.runner();
    await driver.tick(); // validates: every line is still to queue
    expect(h.unqueued.left(MODEL, id)).toBe(10);
    await driver.tick(); // feeds BATCH_INFLIGHT (4)
    expect(h.unqueued.left(MODEL, id)).toBe(6);
    const record = await h.runToEnd(driver, id);
    expect(record.status).toBe('completed');
    expect(h.unqueued.left(MODEL, id)).toBeUndefined();
  });

  it('forgets the lines not yet queued as soon as the batch is cancelled, before it has drained', async () => {
    const id = await h.createBatch(Array.from({ length: 10 }, (_, i) => `r${i}`));
    const driver = h.runner();
    await driver.tick();
    await driver.tick();
    expect(h.unqueued.left(MODEL, id)).toBe(6);
    await h.records.update(id, { cancel_requested: true });
    await driver.tick(); // the lines queued stay until taken back; those never queued are gone at once
    expect(h.unqueued.left(MODEL, id)).toBeUndefined();
  });

  it("queues only what its key's share grants; the line read past it waits and goes first, none skipped", async () => {
    const id = await h.createBatch(Array.from({ length: 10 }, (_, i) => `r${i}`));
    const driver = h.runner();
    await driver.tick(); // validates
    h.shares.room = 1;
    await driver.tick(); // a window of 4, but a share of 1
    expect([...h.queue.jobs.values()].map((j) => j.batch!.line)).toEqual([1]);
    expect(h.records.records.get(id)!.fed_line).toBe(1);
    expect(h.shares.entries.get(MODEL)!.get(id)).toMatchObject({
      request: { owner: 'anonymous', weight: 1, inflight: 0, wanted: 4, capacity: 4 },
      granted: 1,
    });
    h.shares.room = Infinity;
    await driver.tick(); // line 2 was read and held back: it goes first
    expect([...h.queue.jobs.values()].map((j) => j.batch!.line)).toEqual([1, 2, 3, 4]);
    await h.runQueuedLines();
    await driver.tick();
    await h.runQueuedLines();
    await driver.tick(); // lines 9 and 10, and the input's end: it asks for no more, its lines still flying
    expect(h.queue.jobs.size).toBe(2);
    expect(h.shares.entries.get(MODEL)!.has(id)).toBe(false);
    jest.advanceTimersByTime(BATCH_SHARE_LAPSE_MS);
    await driver.tick();
    expect(h.shares.entries.get(MODEL)!.has(id)).toBe(false);
    const record = await h.runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', completed: 10 });
    expect(h.writtenIds(record).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `r${i}`).sort());
    // Ended: its lines no longer count in its key's share.
    expect(h.shares.entries.get(MODEL)!.has(id)).toBe(false);
  });

  it('says how many lines fly while its window is full, so its entry never lapses, and nothing more', async () => {
    await h.createBatch(Array.from({ length: 10 }, (_, i) => `r${i}`));
    const driver = h.runner();
    await driver.tick();
    await driver.tick(); // the window is full
    const entries = h.shares.entries.get(MODEL)!;
    entries.clear();
    await driver.tick();
    expect(entries.size).toBe(0);
    jest.advanceTimersByTime(BATCH_SHARE_LAPSE_MS / 3);
    await driver.tick();
    expect([...entries.values()].map((e) => [e.request.inflight, e.request.wanted])).toEqual([[4, 0]]);
  });

  it('forgets its share as soon as the batch is cancelled', async () => {
    const id = await h.createBatch(Array.from({ length: 10 }, (_, i) => `r${i}`));
    const driver = h.runner();
    await driver.tick();
    await driver.tick();
    expect(h.shares.entries.get(MODEL)!.has(id)).toBe(true);
    await h.records.update(id, { cancel_requested: true });
    await driver.tick();
    expect(h.shares.entries.get(MODEL)!.has(id)).toBe(false);
  });
});

describe('LineFeeder with FAIR_SHARES off', () => {
  let h: BatchRunnerHarness;

  beforeEach(() => {
    h = startHarness({ FAIR_SHARES: 'false' });
  });
  afterEach(stopHarness);

  it('fills its window asking no share', async () => {
    const id = await h.createBatch(Array.from({ length: 10 }, (_, i) => `r${i}`));
    h.shares.room = 0;
    const driver = h.runner();
    await driver.tick();
    await driver.tick();
    expect(h.queue.jobs.size).toBe(4);
    expect(h.shares.entries.size).toBe(0);
    expect(await h.runToEnd(driver, id)).toMatchObject({ status: 'completed', completed: 10 });
  });
});
