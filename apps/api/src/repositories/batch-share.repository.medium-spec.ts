import { describe, expect, it, jest } from '@jest/globals';
import { BATCH_SHARE_LAPSE_MS, batchSharesKey } from '@conveyor/queue';
import { useRepository } from '../../../../test/support/repository-fixture.js';
import { BatchShareRepository } from './batch-share.repository.js';
import type { ShareRequest } from './batch-shares.port.js';

const CAPACITY = 16;

describe("BatchShareRepository: a deployment's batch lines in flight shared by weight between API keys", () => {
  const t = useRepository(
    (config, connection) => new BatchShareRepository(config, connection),
    (r) => r.forget('none', ['none']),
  );

  /** Batch `batchId` of `owner` (weight 1 unless said), with `inflight` lines in flight, asks for `wanted`. */
  const grant = (batchId: string, owner: string, inflight: number, wanted: number, weight = 1) =>
    t.repository.grant(t.deployment, {
      batchId,
      owner,
      weight,
      inflight,
      wanted,
      capacity: CAPACITY,
    } satisfies ShareRequest);

  it('grants a key alone the whole capacity, and no more', async () => {
    expect(await grant('a1', 'team-a', 0, 40)).toBe(CAPACITY);
    expect(await grant('a1', 'team-a', CAPACITY, 40)).toBe(0);
    expect(await grant('a1', 'team-a', CAPACITY - 3, 40)).toBe(3);
  });

  it('grants a newcomer its share at once, and the other key nothing until its lines fall below its own', async () => {
    expect(await grant('a1', 'team-a', 0, 40)).toBe(CAPACITY);
    expect(await grant('b1', 'team-b', 0, 40)).toBe(CAPACITY / 2);
    // A's lines finish one by one: it gets none back until it holds less than its half.
    expect(await grant('a1', 'team-a', CAPACITY - 4, 40)).toBe(0);
    expect(await grant('a1', 'team-a', CAPACITY / 2 - 2, 40)).toBe(2);
    expect(await grant('b1', 'team-b', CAPACITY / 2 - 3, 40)).toBe(3);
  });

  it('shares by weight: 3 to 1 is 12 and 4 of 16', async () => {
    expect(await grant('a1', 'team-a', 0, 40)).toBe(CAPACITY);
    expect(await grant('c1', 'team-c', 0, 40, 3)).toBe(12);
    expect(await grant('a1', 'team-a', 3, 40)).toBe(1);
    expect(await grant('c1', 'team-c', 12, 40, 3)).toBe(0);
  });

  it("splits a key's share between its batches, whichever replica drives each", async () => {
    expect(await grant('b1', 'team-b', 0, 40)).toBe(CAPACITY);
    expect(await grant('a1', 'team-a', 0, 40)).toBe(CAPACITY / 2);
    // A second batch of A gets its half of A's half at once; the first none until it is down to its own.
    expect(await grant('a2', 'team-a', 0, 40)).toBe(CAPACITY / 4);
    expect(await grant('a1', 'team-a', CAPACITY / 2 - 1, 40)).toBe(0);
    expect(await grant('a1', 'team-a', CAPACITY / 4 - 1, 40)).toBe(1);
  });

  it('lends capacity another key leaves unused, and takes nothing back from it', async () => {
    expect(await grant('b1', 'team-b', 0, 2)).toBe(2);
    // B wants only 2: A may have the other 14.
    expect(await grant('a1', 'team-a', 0, 40)).toBe(CAPACITY - 2);
    // B wants its half again: it gets it, over the capacity, while A's lines drain.
    expect(await grant('b1', 'team-b', 2, 40)).toBe(CAPACITY / 2 - 2);
    expect(await grant('a1', 'team-a', CAPACITY - 2, 40)).toBe(0);
  });

  it('says its lines in flight without asking for any, and forgets a batch that ended', async () => {
    expect(await grant('a1', 'team-a', 0, 40)).toBe(CAPACITY);
    expect(await grant('b1', 'team-b', 5, 0)).toBe(0);
    const entry = JSON.parse((await t.redis.hget(batchSharesKey(t.prefix, t.deployment), 'b1'))!) as { n: number };
    expect(entry.n).toBe(5);
    await t.repository.forget('a1', [t.deployment]);
    expect(await t.redis.hexists(batchSharesKey(t.prefix, t.deployment), 'a1')).toBe(0);
    expect(await grant('b1', 'team-b', 5, 40)).toBe(CAPACITY - 5);
  });

  it('drops the entry of a batch whose replica stopped saying how many lines fly', async () => {
    expect(await grant('a1', 'team-a', 0, 40)).toBe(CAPACITY);
    const later = Date.now() + BATCH_SHARE_LAPSE_MS + 1000;
    const clock = jest.spyOn(Date, 'now').mockReturnValue(later);
    try {
      expect(await grant('b1', 'team-b', 0, 40)).toBe(CAPACITY);
      expect(await t.redis.hexists(batchSharesKey(t.prefix, t.deployment), 'a1')).toBe(0);
    } finally {
      clock.mockRestore();
    }
  });
});
