import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ErrorCode } from '@conveyor/openai';
import { BatchRunnerHarness, startHarness, stopHarness } from '../../../../test/support/batch-runner.js';

describe("BatchRunner: its owner's daily token quota", () => {
  let h: BatchRunnerHarness;
  /** What one line of the harness's input reserves: no prompt, no max_tokens, so its deployment's whole context. */
  let perLine: number;
  const ids = Array.from({ length: 6 }, (_, i) => `r${i}`);

  beforeEach(() => {
    h = startHarness();
    perLine = h.config.deployments[0]!.contextSize;
  });
  afterEach(stopHarness);

  it('fails a batch whose estimate the day has no room for, naming the quota, and queues none of it', async () => {
    h.meter('team', ids.length * perLine - 1);
    const id = await h.createBatch(ids);
    const record = await h.runToEnd(h.runner(), id);
    expect(record.status).toBe('failed');
    expect(record.errors).toEqual([
      expect.objectContaining({ code: ErrorCode.tokenLimitExceeded, param: null, line: null }),
    ]);
    expect(record.errors?.[0]?.message).toContain(`estimated ${ids.length * perLine} tokens`);
    expect(record.output_file_id).toBeNull();
    expect(h.queue.jobs.size).toBe(0);
    expect(h.quotas.used.day).toBe(0);
  });

  it('reserves the whole batch against the day as it starts, and ends having charged what its lines used', async () => {
    h.meter('team', ids.length * perLine);
    const id = await h.createBatch(ids);
    const driver = h.runner();
    await driver.tick(); // validates, and reserves
    expect(h.quotas.used).toEqual({ minute: 0, day: ids.length * perLine });
    const record = await h.runToEnd(driver, id);
    expect(record).toMatchObject({ status: 'completed', completed: ids.length });
    // Each line used 5 prompt tokens and 1 output token; the rest of each reservation came back.
    expect(h.quotas.used).toEqual({ minute: 0, day: ids.length * 6 });
    expect(h.quotas.batches.size).toBe(0);
  });

  it('gives back what the lines that never ran reserved when the batch is cancelled', async () => {
    h.meter('team', ids.length * perLine);
    const id = await h.createBatch(ids);
    const driver = h.runner();
    await driver.tick(); // validates
    await driver.tick(); // feeds four lines
    await h.runQueuedLines();
    await driver.tick(); // writes them
    await h.records.update(id, { cancel_requested: true });
    const record = await h.runToEnd(driver, id);
    expect(record.status).toBe('cancelled');
    expect(h.quotas.used.day).toBe(4 * 6);
    expect(h.quotas.batches.size).toBe(0);
  });
});
