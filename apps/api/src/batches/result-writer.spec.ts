import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { BatchRunnerHarness, startHarness, stopHarness } from '../../../../test/support/batch-runner.js';

describe('ResultWriter', () => {
  let h: BatchRunnerHarness;

  beforeEach(() => {
    h = startHarness();
  });
  afterEach(stopHarness);

  it('a replica that dies after writing a part and before committing it: the next writes the same part, once', async () => {
    const ids = Array.from({ length: 6 }, (_, i) => `r${i}`);
    const id = await h.createBatch(ids);
    const first = h.runner();
    await first.tick();
    await first.tick();
    await h.runQueuedLines();
    h.lines.dieBeforeCommit = true;
    await first.tick(); // writes part 0 of the output, then dies before its commit
    const outputId = h.records.records.get(id)!.output_file_id!;
    expect(h.files.lines(outputId)).toHaveLength(4);
    expect(h.lines.done.size).toBe(0);
    // The lease lapses; another replica takes the batch over and writes the same results again.
    jest.advanceTimersByTime(1500);
    const record = await h.runToEnd(h.runner(), id);
    expect(record).toMatchObject({ status: 'completed', completed: 6, failed: 0 });
    expect(h.writtenIds(record).sort()).toEqual([...ids].sort());
  });

  it('a result counts as done only once its part is written: a failed write leaves it to be written later', async () => {
    const id = await h.createBatch(['a', 'b']);
    const driver = h.runner();
    await driver.tick();
    await driver.tick();
    await h.runQueuedLines();
    h.files.failWrites = true;
    await driver.tick();
    expect(h.lines.done.size).toBe(0);
    expect(h.lines.results).toHaveLength(2);
    h.files.failWrites = false;
    const record = await h.runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', completed: 2 });
    expect(h.writtenIds(record).sort()).toEqual(['a', 'b']);
  });

  it('a replica that lost the batch writes and commits nothing', async () => {
    const id = await h.createBatch(['a', 'b']);
    const stale = h.compose();
    await stale.runner.tick();
    await stale.runner.tick();
    jest.advanceTimersByTime(1500);
    const current = h.runner();
    await current.tick(); // takes the lease over
    await h.runQueuedLines();
    const outputId = h.records.records.get(id)!.output_file_id!;
    // The old driver's lease lapsed: its collection is refused before it writes a part.
    await stale.writer.collect(h.records.records.get(id)!, { holder: stale.runner.instance });
    expect(h.files.lines(outputId)).toEqual([]);
    const record = await h.runToEnd(current, id);
    expect(h.writtenIds(record).sort()).toEqual(['a', 'b']);
  });

  it('writes a line retried after its worker died once, however often it reports', async () => {
    const id = await h.createBatch(['a']);
    const driver = h.runner();
    await driver.tick();
    await driver.tick();
    const [jobId] = h.queue.jobs.keys();
    await h.runQueuedLines();
    await h.lines.pushResult(id, { ...h.lines.results[0]!, requestId: jobId! });
    const record = await h.runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', completed: 1 });
    expect(h.writtenIds(record)).toEqual(['a']);
  });
});
