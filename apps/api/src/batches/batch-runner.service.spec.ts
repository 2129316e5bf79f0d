import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { BatchRunnerHarness, startHarness, stopHarness } from '../../../../test/support/batch-runner.js';

describe('BatchRunner', () => {
  let h: BatchRunnerHarness;

  beforeEach(() => {
    h = startHarness();
  });
  afterEach(stopHarness);

  it('says once that it cannot read the batches while that lasts, and once when it can again', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const active = h.records.active.bind(h.records);
    h.records.active = () =>
      Promise.reject(new Error("Stream isn't writeable and enableOfflineQueue options is false"));
    const driver = h.runner();
    for (let i = 0; i < 50; i++) {
      await driver.tick();
      jest.advanceTimersByTime(100);
    }
    expect(warn.mock.calls.map(([m]) => m)).toEqual([
      "Batch runner paused: Stream isn't writeable and enableOfflineQueue options is false; batches wait until it answers again",
    ]);
    h.records.active = active;
    await driver.tick();
    await driver.tick();
    expect(log.mock.calls.map(([m]) => m)).toEqual(['Batch runner resumed after 5.0 s']);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('runs every line once, keeping at most BATCH_INFLIGHT in the queue, and completes', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `r${i}`);
    const id = await h.createBatch(ids);
    const driver = h.runner();
    await driver.tick(); // validates
    await driver.tick(); // feeds the window
    expect(h.queue.jobs.size).toBe(4);
    const record = await h.runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', total: 10, completed: 10, failed: 0 });
    expect(h.writtenIds(record).sort()).toEqual([...ids].sort());
    expect(h.files.lines(record.output_file_id)[0]?.response?.body).toMatchObject({ text: 'reply r0' });
    // Each written line's prompt is counted once: what its worker computed, and what its prompt cache reused.
    const counted = (await h.metrics.promptTokens.get()).values;
    expect(counted.find((v) => v.labels.source === 'cached')?.value).toBe(30);
    expect(counted.find((v) => v.labels.source === 'computed')?.value).toBe(20);
  });

  it("ends a batch once, with its event and its files' expiry from its end: taken over after, nothing changes", async () => {
    const id = await h.createBatch(['a', 'b']);
    await h.records.update(id, { output_ttl_s: 60 });
    const record = await h.runToEnd(h.runner(), id);
    expect(record.ended_event).toMatchObject({ object: 'event', type: 'batch.completed', data: { id } });
    expect(h.expiries.at.get(record.output_file_id!)).toBe(record.completed_at! + 60);
    // A replica that took the batch over before it left the active set ends it again: the first end stands.
    h.records.activeIds.add(id);
    jest.advanceTimersByTime(5000);
    await h.runner().tick();
    expect(h.records.records.get(id)).toEqual(record);
    expect(h.expiries.at.get(record.output_file_id!)).toBe(record.completed_at! + 60);
    expect(h.records.activeIds.has(id)).toBe(false);
  });

  it('reads the input twice in a batch that runs to the end: once to validate it, once to feed it', async () => {
    const id = await h.createBatch(Array.from({ length: 6 }, (_, i) => `r${i}`));
    const driver = h.runner();
    await driver.tick(); // validates
    await driver.tick(); // feeds r0..r3
    await h.runQueuedLines();
    await driver.tick(); // feeds r4, r5: every line is fed
    // The last lines take a while: nothing is left to feed, and nothing is read for it.
    for (let i = 0; i < 5; i++) {
      await driver.tick();
      jest.advanceTimersByTime(100);
    }
    const record = await h.runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', completed: 6 });
    expect(h.files.reads.get(record.input_file_id)).toBe(2);
  });

  it('a replica that gets a batch back after another drove it reads on from where that one left off', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `r${i}`);
    const id = await h.createBatch(ids);
    const first = h.runner();
    await first.tick();
    await first.tick(); // feeds r0..r3
    await h.runQueuedLines();
    jest.advanceTimersByTime(1500);
    const second = h.runner();
    await second.tick(); // takes the batch over: writes r0..r3, feeds r4..r7
    await h.runQueuedLines();
    jest.advanceTimersByTime(1500);
    const queued: string[] = [];
    const enqueue = h.queue.enqueue.bind(h.queue);
    h.queue.enqueue = async (job) => {
      queued.push(job.batch!.customId);
      return enqueue(job);
    };
    await first.tick(); // has it back: nothing it saw before the other drove it counts any more
    expect(queued).toEqual(['r8', 'r9', 'r10', 'r11']);
    const record = await h.runToEnd(first, id);
    expect(record).toMatchObject({ status: 'completed', completed: 12 });
    expect(h.writtenIds(record).sort()).toEqual([...ids].sort());
  });

  it('a replica shutting down hands its batch to another at once, without waiting for its lease to lapse', async () => {
    const id = await h.createBatch(Array.from({ length: 8 }, (_, i) => `r${i}`));
    const first = h.runner();
    await first.tick();
    await first.tick(); // feeds r0..r3
    const second = h.runner();
    await second.tick();
    expect(h.lines.lease?.holder).not.toBe(undefined);
    const holder = h.lines.lease!.holder;
    await first.onApplicationShutdown();
    expect(h.lines.lease).toBeNull();
    await h.runQueuedLines();
    await second.tick(); // no time has passed: the lease is free, and the second takes it
    expect(h.lines.lease?.holder).not.toBe(holder);
    const record = await h.runToEnd(second, id);
    expect(record).toMatchObject({ status: 'completed', completed: 8 });
  });

  it('fails a batch whose input file is gone, once and clearly, instead of retrying it forever', async () => {
    const id = await h.createBatch(['a']);
    await h.files.delete(h.records.records.get(id)!.input_file_id);
    const driver = h.runner();
    await driver.tick();
    const record = h.records.records.get(id)!;
    expect(record.status).toBe('failed');
    expect(record.errors).toEqual([expect.objectContaining({ code: 'input_file_unreadable', param: 'input_file_id' })]);
    expect(h.records.activeIds.has(id)).toBe(false);
  });

  it('fails a batch whose input stays unreadable for 60 s, counted from the last read that worked', async () => {
    const id = await h.createBatch(['a', 'b']);
    const driver = h.runner();
    h.files.failReads = true;
    await driver.tick();
    jest.advanceTimersByTime(59_000);
    await driver.tick();
    expect(h.records.records.get(id)).toMatchObject({ status: 'validating' });
    h.files.failReads = false;
    await driver.tick(); // it reads again: validated
    expect(h.records.records.get(id)).toMatchObject({ status: 'in_progress' });
    // Unreadable again as the lines are fed: the 60 s start over, from this failure.
    h.files.failReads = true;
    await driver.tick();
    jest.advanceTimersByTime(59_000);
    await driver.tick();
    expect(h.records.records.get(id)).toMatchObject({ status: 'in_progress' });
    expect(h.records.activeIds.has(id)).toBe(true);
    jest.advanceTimersByTime(1_000);
    await driver.tick();
    const record = h.records.records.get(id)!;
    expect(record).toMatchObject({ status: 'failed', failed_at: expect.any(Number) });
    expect(record.errors).toEqual([
      expect.objectContaining({
        code: 'input_file_unreadable',
        param: 'input_file_id',
        message: expect.stringContaining('the store is unreachable'),
      }),
    ]);
    expect(h.records.activeIds.has(id)).toBe(false);
    expect(h.queue.jobs.size).toBe(0);
  });
});
