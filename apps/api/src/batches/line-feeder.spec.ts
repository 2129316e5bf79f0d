import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
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
});
