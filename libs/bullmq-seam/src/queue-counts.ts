import type { RedisClient } from '@conveyor/redis';
import { bullQueueKey } from './queue-keys.js';

/** BullMQ 6.7.0 scores a prioritized job `priority * 2^32 + arrival counter` (getPriorityScore.lua). */
const PRIORITY_SCORE = 0x100000000;

/** One queue's unfinished jobs, with its prioritized jobs split at a priority. */
export interface SplitCounts {
  /** Jobs waiting without a priority. */
  wait: number;
  /** Prioritized jobs below the split's priority. */
  before: number;
  /** Prioritized jobs at or past it. */
  from: number;
  delayed: number;
  active: number;
}

/**
 * A queue's waiting jobs, its prioritized ones counted apart below and from `splitAt` (BullMQ's own
 * counts tell the prioritized apart from the plain waiting, not one priority from another), its delayed
 * and its running ones, read in one transaction: a job moving between states is counted once. Every key
 * is the queue's, so on a cluster it is one slot.
 */
export async function countSplitAtPriority(
  redis: RedisClient,
  prefix: string,
  queue: string,
  splitAt: number,
): Promise<SplitCounts> {
  const { wait, bands, delayed, active } = await countByPriority(redis, prefix, queue, [splitAt]);
  return { wait, before: bands[0] ?? 0, from: bands[1] ?? 0, delayed, active };
}

/** One queue's unfinished jobs, its prioritized ones counted per band of priorities. */
export interface BandCounts {
  /** Jobs waiting without a priority. */
  wait: number;
  /** Prioritized jobs per band: below the first bound, between each bound and the next, from the last. */
  bands: number[];
  delayed: number;
  active: number;
}

/**
 * As countSplitAtPriority, with the prioritized jobs counted in the bands that `bounds` (rising
 * priorities) make: one more band than bounds. All in one transaction, on the queue's own keys.
 */
export async function countByPriority(
  redis: RedisClient,
  prefix: string,
  queue: string,
  bounds: readonly number[],
): Promise<BandCounts> {
  const prioritized = bullQueueKey(prefix, queue, 'prioritized');
  const multi = redis.multi().llen(bullQueueKey(prefix, queue, 'wait'));
  const edges = [0, ...bounds.map((b) => b * PRIORITY_SCORE)];
  edges.forEach((from, i) => {
    const to = edges[i + 1];
    multi.zcount(prioritized, from, to === undefined ? '+inf' : `(${to}`);
  });
  const replies = await multi
    .zcard(bullQueueKey(prefix, queue, 'delayed'))
    .llen(bullQueueKey(prefix, queue, 'active'))
    .exec();
  const counts = (replies ?? []).map(([err, n]) => {
    if (err) throw err;
    return Number(n);
  });
  const [wait = 0, ...rest] = counts;
  const bands = rest.slice(0, edges.length);
  const [delayed = 0, active = 0] = rest.slice(edges.length);
  return { wait, bands, delayed, active };
}
