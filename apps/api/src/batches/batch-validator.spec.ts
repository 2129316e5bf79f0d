import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { BatchRunnerHarness, startHarness, stopHarness } from '../../../../test/support/batch-runner.js';
import { input } from '../../../../test/support/batch-fakes.js';

describe('BatchValidator', () => {
  let h: BatchRunnerHarness;

  beforeEach(() => {
    h = startHarness();
  });
  afterEach(stopHarness);

  it('validation fails a batch with more lines than BATCH_MAX_LINES, and queues none of them', async () => {
    h = new BatchRunnerHarness({ BATCH_MAX_LINES: '2' });
    const id = await h.createBatch(['a', 'b', 'c']);
    await h.runner().tick();
    const record = h.records.records.get(id)!;
    expect(record).toMatchObject({ status: 'failed', total: 3, failed_at: expect.any(Number), output_file_id: null });
    expect(record.errors).toEqual([expect.objectContaining({ code: 'too_many_lines', line: null })]);
    expect(h.queue.jobs.size).toBe(0);
    expect(h.records.activeIds.has(id)).toBe(false);
  });

  it('validation fails a file with no requests in it', async () => {
    const id = await h.createBatch([], false, '\n  \n');
    await h.runner().tick();
    expect(h.records.records.get(id)).toMatchObject({ status: 'failed', total: 0 });
    expect(h.records.records.get(id)!.errors).toEqual([expect.objectContaining({ code: 'empty_file' })]);
    expect(h.records.activeIds.has(id)).toBe(false);
  });

  it('validation lists the first 100 invalid lines, in order, and counts the rest', async () => {
    const valid = input(['a']).trim();
    const id = await h.createBatch([], false, [valid, ...Array.from({ length: 104 }, () => valid)].join('\n'));
    await h.runner().tick();
    const errors = h.records.records.get(id)!.errors!;
    expect(errors).toHaveLength(101);
    expect(errors.slice(0, 100).map((e) => [e.code, e.line])).toEqual(
      Array.from({ length: 100 }, (_, i) => ['duplicate_custom_id', i + 2]),
    );
    expect(errors[100]).toMatchObject({ code: 'too_many_errors', message: '4 more invalid lines are not listed.' });
  });

  it('a batch cancelled while validating starts as cancelling and ends with every line batch_cancelled', async () => {
    const id = await h.createBatch(['a', 'b']);
    await h.records.update(id, { cancel_requested: true });
    const driver = h.runner();
    await driver.tick();
    expect(h.records.records.get(id)).toMatchObject({ status: 'cancelling', total: 2 });
    const record = await h.runToEnd(driver, id);
    expect(record.status).toBe('cancelled');
    expect(h.queue.jobs.size).toBe(0);
    expect(h.files.lines(record.error_file_id).map((l) => [l.custom_id, l.error?.code])).toEqual([
      ['a', 'batch_cancelled'],
      ['b', 'batch_cancelled'],
    ]);
  });

  it('renews the lease while a long validation reads, and stops without a write where another replica took it', async () => {
    // A lease of 3 ms (below what configuration allows), on the real clock: renewed every millisecond of reading.
    jest.useRealTimers();
    h.config = { ...h.config, batch: { ...h.config.batch, leaseMs: 3 } };
    const ids = Array.from({ length: 20_000 }, (_, i) => `line-${i}`);
    const id = await h.createBatch(ids);
    const hold = h.lines.holdLease.bind(h.lines);
    const holders: string[] = [];
    h.lines.holdLease = async (batchId, holder, ttlMs) => {
      holders.push(holder);
      // The third hold is the second renewal: by then another replica has the batch.
      if (holders.length === 3) h.lines.lease = { holder: 'replica-b', until: Date.now() + 60_000 };
      return hold(batchId, holder, ttlMs);
    };
    await h.runner().tick();
    expect(holders.length).toBeGreaterThanOrEqual(3);
    expect(new Set(holders).size).toBe(1);
    // Nothing of its validation was written: the batch is as replica-b found it, and no file was made for it.
    const record = h.records.records.get(id)!;
    expect(record).toMatchObject({ status: 'validating', output_file_id: null });
    expect(record.plan_file_id ?? null).toBeNull();
    expect(h.unqueued.counts.size).toBe(0);
  });
});
