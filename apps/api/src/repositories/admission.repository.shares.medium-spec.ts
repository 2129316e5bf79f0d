import { describe, expect, it, jest } from '@jest/globals';
import type { PlatformConfig } from '@conveyor/config';
import { ADMISSION_ASKING_MS, admissionHeldKey, admissionKey } from '@conveyor/queue';
import { useRepository } from '../../../../test/support/repository-fixture.js';
import { AdmissionRepository } from './admission.repository.js';
import type { Admission, Asker } from './queue-admission.port.js';

describe("AdmissionRepository: the queue's places shared by weight between API keys", () => {
  const t = useRepository(
    (config, connection) => new AdmissionRepository(config, connection),
    (r) => r.release('none', 'none'),
    {
      api: { queueTimeoutMs: 60_000 },
    } as Partial<PlatformConfig>,
  );
  let n = 0;
  const a: Asker = { name: 'team-a', weight: 1 };
  const b: Asker = { name: 'team-b', weight: 1 };

  /** `count` requests of `asker`, one after another, and what each was answered. */
  const ask = async (asker: Asker, count: number, limit: number): Promise<Admission[]> => {
    const answers: Admission[] = [];
    for (let i = 0; i < count; i++)
      answers.push(await t.repository.reserve(t.deployment, `${asker.name}-${n++}`, limit, asker));
    return answers;
  };
  const admitted = (answers: Admission[]) => answers.filter((x) => x.admitted).length;

  it('lets a key alone take every place', async () => {
    expect(admitted(await ask(a, 15, 10))).toBe(10);
  });

  it("keeps the places another asking key is short of its share free of one key's burst, 1:1", async () => {
    expect(admitted(await ask(b, 1, 10))).toBe(1);
    const burst = await ask(a, 20, 10);
    // A's share is 5 of 10; B holds 1 and is owed 4: A gets 5, and is told why it gets no more.
    expect(admitted(burst)).toBe(5);
    expect(burst.at(-1)).toEqual({ admitted: false, queued: 6, held: 5, share: 5 });
    // B takes the 4 places kept for it; then the queue is full, for everyone.
    const more = await ask(b, 5, 10);
    expect(admitted(more)).toBe(4);
    expect(more.at(-1)).toEqual({ admitted: false, queued: 10 });
  });

  it('shares by weight: a key of weight 3 is kept 6 of 8 places against a key of weight 1', async () => {
    const heavy: Asker = { name: 'team-c', weight: 3 };
    expect(admitted(await ask(heavy, 1, 8))).toBe(1);
    expect(admitted(await ask(a, 10, 8))).toBe(2);
    expect(admitted(await ask(heavy, 10, 8))).toBe(5);
  });

  it('counts only the places still waiting: a job a worker took frees its key to take another', async () => {
    await ask(b, 1, 10);
    await ask(a, 20, 10);
    const places = admissionKey(t.prefix, t.deployment);
    const ofA = (await t.redis.zrange(places, '0', '-1')).filter((id) => id.startsWith('team-a'));
    expect(ofA).toHaveLength(5);
    // What a worker does as it takes a job: the place goes from the deployment's places only.
    await t.redis.zrem(places, ...ofA.slice(0, 3));
    expect(admitted(await ask(a, 10, 10))).toBe(3);
  });

  it('stops keeping places for a key that has not asked for one lately', async () => {
    await ask(b, 1, 10);
    expect(admitted(await ask(a, 20, 10))).toBe(5);
    // Their jobs queued: the places are held until the queue timeout, past the reservation.
    for (const id of await t.redis.zrange(admissionKey(t.prefix, t.deployment), '0', '-1'))
      await t.repository.queued(t.deployment, id);
    const later = Date.now() + ADMISSION_ASKING_MS + 1000;
    const clock = jest.spyOn(Date, 'now').mockReturnValue(later);
    try {
      // B's one place is still waiting, but B asks no more: A may fill the queue.
      expect(admitted(await ask(a, 20, 10))).toBe(4);
    } finally {
      clock.mockRestore();
    }
  });

  it("keeps a key's set of ids small however many of its requests workers take", async () => {
    const places = admissionKey(t.prefix, t.deployment);
    for (let i = 0; i < 200; i++) {
      const [answer] = await ask(a, 1, 2);
      expect(answer).toEqual({ admitted: true });
      await t.redis.zremrangebyrank(places, 0, -1);
    }
    expect(await t.redis.zcard(admissionHeldKey(t.prefix, t.deployment, a.name))).toBeLessThanOrEqual(20);
  });

  it('shares nothing when no key is named: the limit alone, as before', async () => {
    const plain = await Promise.all(
      Array.from({ length: 8 }, (_, i) => t.repository.reserve(t.deployment, `p${i}`, 5)),
    );
    expect(plain.filter((x) => x.admitted)).toHaveLength(5);
    expect(plain.find((x) => !x.admitted)).toEqual({ admitted: false, queued: 5 });
  });
});
