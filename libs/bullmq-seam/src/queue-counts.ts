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
  const prioritized = bullQueueKey(prefix, queue, 'prioritized');
  const replies = await redis
    .multi()
    .llen(bullQueueKey(prefix, queue, 'wait'))
    .zcount(prioritized, 0, `(${splitAt * PRIORITY_SCORE}`)
    .zcount(prioritized, splitAt * PRIORITY_SCORE, '+inf')
    .zcard(bullQueueKey(prefix, queue, 'delayed'))
    .llen(bullQueueKey(prefix, queue, 'active'))
    .exec();
  const [wait = 0, before = 0, from = 0, delayed = 0, active = 0] = (replies ?? []).map(([err, n]) => {
    if (err) throw err;
    return Number(n);
  });
  return { wait, before, from, delayed, active };
}
