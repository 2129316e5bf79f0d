import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { parseBatchLineJobId } from '@conveyor/queue';
import { BatchRunnerHarness, startHarness, stopHarness } from '../../../../test/support/batch-runner.js';
import { LINES_PER_PART } from './result-writer.js';

describe('LineRecovery', () => {
  let h: BatchRunnerHarness;

  beforeEach(() => {
    h = startHarness();
  });
  afterEach(stopHarness);

  it('queues again a line whose job vanished from the queue (a failover), and still writes it once', async () => {
    const ids = ['a', 'b', 'c'];
    const id = await h.createBatch(ids);
    const driver = h.runner();
    await driver.tick();
    await driver.tick();
    const lostJob = [...h.queue.jobs.keys()].find((j) => parseBatchLineJobId(j)?.line === 2)!;
    h.queue.lose(lostJob);
    await h.runQueuedLines();
    for (let i = 0; i < 4; i++) {
      await driver.tick();
      jest.advanceTimersByTime(5000);
    }
    expect(h.queue.jobs.has(lostJob)).toBe(true);
    const record = await h.runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', completed: 3 });
    expect(h.writtenIds(record).sort()).toEqual(ids);
  });

  it('never completes with a custom_id unaccounted for: a line lost for good is written as lost', async () => {
    const id = await h.createBatch(['a', 'b']);
    const driver = h.runner();
    await driver.tick();
    await driver.tick();
    // Line 2's job is lost every time it is queued, with no record of it in flight either.
    const drop = () => {
      for (const jobId of [...h.queue.jobs.keys()]) {
        if (parseBatchLineJobId(jobId)?.line === 2) {
          h.queue.lose(jobId);
          h.lines.inflightLines.delete(2);
        }
      }
    };
    for (let i = 0; i < 40 && h.records.activeIds.has(id); i++) {
      drop();
      await driver.tick();
      drop();
      await h.runQueuedLines();
      jest.advanceTimersByTime(100);
    }
    const record = h.records.records.get(id)!;
    expect(record).toMatchObject({ status: 'completed', completed: 1, failed: 1 });
    expect(h.files.lines(record.error_file_id)).toEqual([
      expect.objectContaining({ custom_id: 'b', error: expect.objectContaining({ code: 'line_lost' }) }),
    ]);
  });

  it('releases the images of the lines a cancel takes back before any worker ran them', async () => {
    const id = await h.createBatch(
      Array.from({ length: 8 }, (_, i) => `r${i}`),
      true,
    );
    const driver = h.runner();
    await driver.tick();
    await driver.tick();
    expect(h.images.jobs.size).toBe(4);
    await h.records.update(id, { cancel_requested: true, status: 'cancelling' });
    await driver.tick();
    expect(h.queue.jobs.size).toBe(0);
    expect(h.images.jobs.size).toBe(0);
  });

  it('a cancel writes every line that did not run as batch_cancelled, once', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `r${i}`);
    const id = await h.createBatch(ids);
    const driver = h.runner();
    await driver.tick();
    await driver.tick();
    await h.records.update(id, { cancel_requested: true, status: 'cancelling' });
    const record = await h.runToEnd(driver, id);
    expect(record.status).toBe('cancelled');
    expect(h.writtenIds(record).sort()).toEqual([...ids].sort());
    expect(h.files.lines(record.error_file_id).every((l) => l.error?.code === 'batch_cancelled')).toBe(true);
  });

  it('an expired batch keeps the lines that ran and writes the rest as batch_expired, once', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `r${i}`);
    const id = await h.createBatch(ids);
    const driver = h.runner();
    await driver.tick();
    await driver.tick();
    await h.runQueuedLines();
    await h.records.update(id, { expires_at: Math.floor(Date.now() / 1000) });
    const record = await h.runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'expired', expired_at: expect.any(Number), completed: 4, failed: 0 });
    expect(h.files.lines(record.output_file_id).map((l) => l.custom_id)).toEqual(['r0', 'r1', 'r2', 'r3']);
    expect(h.files.lines(record.error_file_id).map((l) => [l.custom_id, l.error?.code])).toEqual(
      ['r4', 'r5', 'r6', 'r7'].map((c) => [c, 'batch_expired']),
    );
  });

  it('drains a long input over several ticks, each reading on after the last line the one before wrote', async () => {
    const ids = Array.from({ length: 12 * LINES_PER_PART }, (_, i) => `r${i}`);
    const id = await h.createBatch(ids);
    const driver = h.runner();
    await driver.tick();
    await h.records.update(id, { cancel_requested: true, status: 'cancelling' });
    // Each part written takes a quarter of the lease on the clock: a pass, at most half a lease, writes three.
    const writePart = h.files.writePart.bind(h.files);
    jest.spyOn(h.files, 'writePart').mockImplementation(async (...args) => {
      jest.setSystemTime(Date.now() + h.config.batch.leaseMs / 4);
      return writePart(...args);
    });
    const asked = jest.spyOn(h.lines, 'doneAmong');
    let ticks = 0;
    for (; ticks < 40 && h.records.activeIds.has(id); ticks++) await driver.tick();
    const record = h.records.records.get(id)!;
    expect(record.status).toBe('cancelled');
    expect(ticks).toBeGreaterThanOrEqual(4);
    expect(h.writtenIds(record).sort()).toEqual([...ids].sort());
    // Each line was looked up once: no pass went back over lines an earlier one had written.
    expect(asked.mock.calls.reduce((sum, [, lines]) => sum + lines.length, 0)).toBe(ids.length);
  });
});
