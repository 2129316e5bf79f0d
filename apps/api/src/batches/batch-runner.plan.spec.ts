import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { jest } from '@jest/globals';
import type { BatchOutputLine } from '@conveyor/openai';
import { BatchRunnerHarness, startHarness, stopHarness } from '../../../../test/support/batch-runner.js';
import { MODEL } from '../../../../test/support/batch-fakes.js';

/** A batch input whose lines are `[custom_id, system prompt, user item, temperature]`. */
const linesOf = (lines: Array<[string, string, string, number?]>): string =>
  lines
    .map(([custom_id, system, user, temperature]) =>
      JSON.stringify({
        custom_id,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: MODEL, system, user, ...(temperature === undefined ? {} : { temperature }) },
      }),
    )
    .join('\n') + '\n';

/** Lines over three instructions, shuffled as a file made by hand would be: four lines each. */
const MIXED: Array<[string, string, string]> = [
  ['a1', 'grade', 'x1'],
  ['b1', 'translate', 'x2'],
  ['c1', 'extract', 'x3'],
  ['a2', 'grade', 'x4'],
  ['b2', 'translate', 'x5'],
  ['a3', 'grade', 'x6'],
  ['c2', 'extract', 'x7'],
  ['b3', 'translate', 'x8'],
  ['c3', 'extract', 'x9'],
  ['a4', 'grade', 'x10'],
  ['b4', 'translate', 'x11'],
  ['c4', 'extract', 'x12'],
];

describe('BatchRunner: the batch plan', () => {
  let h: BatchRunnerHarness;
  /** custom_ids in the order their jobs were queued. */
  let queued: string[];

  beforeEach(() => {
    h = startHarness();
    queued = [];
    const enqueue = h.queue.enqueue.bind(h.queue);
    h.queue.enqueue = async (job) => {
      queued.push(job.batch!.customId);
      return enqueue(job);
    };
  });
  afterEach(stopHarness);

  it('feeds the lines of each instruction together, instruction by instruction, not in file order', async () => {
    const id = await h.createBatch([], false, linesOf(MIXED));
    const record = await h.runToEnd(h.runner(), id);
    expect(record).toMatchObject({ status: 'completed', completed: 12, failed: 0 });
    expect(queued).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'b3', 'b4', 'c1', 'c2', 'c3', 'c4']);
    expect(record.plan).toEqual({ groups: 3, steps: 3, folded: 0 });
    expect(h.writtenIds(record).sort()).toEqual(MIXED.map(([c]) => c).sort());
  });

  it('a replica that takes the batch over feeds on in the plan where the last one stopped', async () => {
    const id = await h.createBatch([], false, linesOf(MIXED));
    const first = h.runner();
    await first.tick(); // validates and plans
    await first.tick(); // feeds a1..a4
    await h.runQueuedLines();
    jest.advanceTimersByTime(1500);
    const second = h.runner();
    await second.tick(); // takes it over: writes a1..a4, feeds b1..b4
    expect(queued).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'b3', 'b4']);
    const record = await h.runToEnd(second, id);
    expect(queued.slice(8)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(record).toMatchObject({ status: 'completed', completed: 12 });
    expect(h.writtenIds(record).sort()).toEqual(MIXED.map(([c]) => c).sort());
  });

  it('runs a greedy line asked again once and writes its result under every custom_id', async () => {
    const lines: Array<[string, string, string, number]> = [
      ['q1', 'grade', 'same', 0],
      ['q2', 'grade', 'other', 0],
      ['q3', 'grade', 'same', 0],
      ['q4', 'grade', 'same', 0],
      ['q5', 'grade', 'other', 0],
    ];
    h.meter('team', 1_000_000);
    const id = await h.createBatch([], false, linesOf(lines));
    const record = await h.runToEnd(h.runner(), id);
    expect(queued).toEqual(['q1', 'q2']);
    expect(record).toMatchObject({ status: 'completed', completed: 5, failed: 0, plan: { folded: 3 } });
    const output = h.files.lines(record.output_file_id) as BatchOutputLine[];
    expect(output.map((l) => l.custom_id).sort()).toEqual(['q1', 'q2', 'q3', 'q4', 'q5']);
    const body = (c: string) => output.find((l) => l.custom_id === c)!.response!.body as { text: string };
    // The reply of the line that ran, under each custom_id; each line its own request id.
    expect([body('q3').text, body('q4').text]).toEqual(['reply q1', 'reply q1']);
    expect(body('q5').text).toBe('reply q2');
    expect(new Set(output.map((l) => l.id)).size).toBe(5);
    // Two lines ran (5 prompt tokens each, 3 of them reused); three were answered without evaluating theirs.
    expect(record).toMatchObject({ prompt_tokens: 10, cached_tokens: 6, folded_tokens: 15 });
    // Its owner's day is charged for what ran: two lines of 5 prompt tokens and 1 generated.
    expect(h.quotas.used.day).toBe(2 * 6);
    // The usage ledger counts what ran, one entry per part of results written, not one per line.
    expect(h.usage.entries).toEqual([
      expect.objectContaining({
        requestId: `${id}:output-0:${MODEL}`,
        batch: true,
        requests: 2,
        usage: { promptTokens: 10, completionTokens: 2, cachedTokens: 6 },
      }),
    ]);
  });

  it('runs every line that samples without a seed, however alike', async () => {
    const id = await h.createBatch(
      [],
      false,
      linesOf([
        ['s1', 'grade', 'same', 1],
        ['s2', 'grade', 'same', 1],
        ['s3', 'grade', 'same', 1],
      ]),
    );
    const record = await h.runToEnd(h.runner(), id);
    expect(queued).toEqual(['s1', 's2', 's3']);
    expect(record).toMatchObject({ completed: 3, plan: { folded: 0 } });
  });

  it('runs repeats too when the batch turned folding off', async () => {
    const id = await h.createBatch(
      [],
      false,
      linesOf([
        ['g1', 'grade', 'same', 0],
        ['g2', 'grade', 'same', 0],
      ]),
    );
    await h.records.update(id, { fold_repeats: false });
    const record = await h.runToEnd(h.runner(), id);
    expect(queued).toEqual(['g1', 'g2']);
    expect(record).toMatchObject({ completed: 2, plan: { folded: 0 } });
  });

  it('a cancelled batch writes each custom_id once, the folded ones of a line taken back included', async () => {
    const lines: Array<[string, string, string, number]> = [
      ['k1', 'grade', 'same', 0],
      ['k2', 'grade', 'same', 0],
      ['k3', 'extract', 'other', 0],
      ['k4', 'extract', 'other', 0],
      ['k5', 'grade', 'third', 0],
    ];
    const id = await h.createBatch([], false, linesOf(lines));
    const driver = h.runner();
    await driver.tick(); // validates
    await driver.tick(); // feeds k1, k5 (grade), k3 (extract)
    await h.records.update(id, { cancel_requested: true });
    const record = await h.runToEnd(driver, id);
    expect(record.status).toBe('cancelled');
    expect(h.writtenIds(record).sort()).toEqual(['k1', 'k2', 'k3', 'k4', 'k5']);
  });

  it('deletes the plan with the batch', async () => {
    const id = await h.createBatch([], false, linesOf(MIXED));
    const record = await h.runToEnd(h.runner(), id);
    expect(record.plan_file_id).toBeDefined();
    expect(h.files.files.has(record.plan_file_id!)).toBe(false);
  });
});
