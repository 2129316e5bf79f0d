import type { RedisClient } from '@conveyor/redis';
import type { Result } from 'ioredis';
import { bullJobKeyPrefix, bullQueueKey, type BullQueuePart } from './queue-keys.js';

/**
 * Moves every active job of one queue whose lock a dead process holds back to waiting, as BullMQ
 * 6.7.0's moveStalledJobsToWait does with a job whose lock has lapsed, without waiting for the lock to
 * lapse, and on the keys it reads (its `stalled-check` aside, and `paused`: in 6.7.0 a paused queue keeps
 * its jobs in `wait`, its meta saying it is paused). For each job: its lock goes and it leaves the
 * stalled set (as removeLock does); it leaves the active list; its stalled count (`stc`) rises, and past
 * `maxStalledCount` it is marked to fail when next taken (`defa`), unless it is a repeatable job (its
 * `rjk` names a scheduler in `repeat`); it goes back to the head of the waiting jobs, and a waiting
 * worker is woken unless the queue is paused or at its concurrency (moveJobToWait); the queue's events
 * say it waits and stalled. One rule differs, taken from moveJobFromActiveToWait: a prioritized job
 * goes back to the head of its priority, not into the plain wait list, so a batch line stays behind
 * interactive jobs. The worker that takes it counts a new attempt, so its reply's fence holds.
 *
 * A job is recognised by its lock token alone, which a worker makes `<worker id>:<n>` (see
 * `claimTokens`): a job another worker took since has that worker's token, and a job whose lock already
 * lapsed is BullMQ's own stalled check's to find. Atomic, so of several workers taking a dead one's
 * jobs over at once, one moves each job. Every key is the queue's, so on a cluster it runs in one slot.
 *
 * KEYS: the queue's `PARTS`, in that order. ARGV: 1 maxStalledCount, 2 the queue's job key prefix, 3 the
 * dead process's token prefix. Returns each job moved as its id, where it went (`wait` or `prioritized`)
 * and whether it was marked to fail (1 or 0).
 */
const TAKE_OVER = `
local rcall = redis.call
local stalledKey, waitKey, activeKey, prioritizedKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local metaKey, markerKey, eventsKey, repeatKey = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local maxStalled, keyPrefix, tokenPrefix = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local maxEvents = rcall('HGET', metaKey, 'opts.maxLenEvents') or 10000
local moved = {}
for _, jobId in ipairs(rcall('LRANGE', activeKey, 0, -1)) do
  local jobKey = keyPrefix .. jobId
  local token = rcall('GET', jobKey .. ':lock')
  if token and string.sub(token, 1, #tokenPrefix) == tokenPrefix then
    rcall('DEL', jobKey .. ':lock')
    rcall('SREM', stalledKey, jobId)
    if rcall('LREM', activeKey, 1, jobId) > 0 then
      local stalledCount = rcall('HINCRBY', jobKey, 'stc', 1)
      local schedulerId = rcall('HGET', jobKey, 'rjk')
      local repeatable = schedulerId and (rcall('EXISTS', repeatKey .. ':' .. schedulerId) == 1
        or rcall('ZSCORE', repeatKey, schedulerId) ~= false)
      local failing = 0
      if stalledCount > maxStalled and not repeatable then
        rcall('HSET', jobKey, 'defa', 'job stalled more than allowable limit')
        failing = 1
      end
      local priority = tonumber(rcall('HGET', jobKey, 'priority')) or 0
      local to = 'wait'
      if priority > 0 then
        rcall('ZADD', prioritizedKey, priority * 0x100000000, jobId)
        to = 'prioritized'
      else
        rcall('RPUSH', waitKey, jobId)
      end
      local meta = rcall('HMGET', metaKey, 'paused', 'concurrency')
      local held = meta[1] or (meta[2] and rcall('LLEN', activeKey) >= tonumber(meta[2]))
      if not held then rcall('ZADD', markerKey, 0, '0') end
      rcall('XADD', eventsKey, 'MAXLEN', '~', maxEvents, '*', 'event', 'waiting', 'jobId', jobId, 'prev', 'active')
      rcall('XADD', eventsKey, 'MAXLEN', '~', maxEvents, '*', 'event', 'stalled', 'jobId', jobId)
      moved[#moved + 1] = {jobId, to, failing}
    end
  end
end
return moved
`;

/** The queue parts TAKE_OVER touches, in its KEYS order. */
const PARTS: readonly BullQueuePart[] = [
  'stalled',
  'wait',
  'active',
  'prioritized',
  'meta',
  'marker',
  'events',
  'repeat',
];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    bullTakeOverJobs(...keysThenArgs: (string | number)[]): Result<[string, TakenBack['to'], number][], Context>;
  }
}

/** A job taken back from a dead process: where it waits now, and whether it fails when next taken. */
export interface TakenBack {
  id: string;
  to: 'wait' | 'prioritized';
  failing: boolean;
}

/** Taking a dead process's jobs back from BullMQ's active list, on one connection. */
export class BullTakeOver {
  constructor(private readonly redis: RedisClient) {
    redis.defineCommand('bullTakeOverJobs', { numberOfKeys: PARTS.length, lua: TAKE_OVER });
  }

  /** The jobs of `queue` whose lock a token beginning with `tokenPrefix` holds, moved back to waiting. */
  async jobsOf(prefix: string, queue: string, tokenPrefix: string, maxStalledCount: number): Promise<TakenBack[]> {
    const keys = PARTS.map((part) => bullQueueKey(prefix, queue, part));
    const moved = await this.redis.bullTakeOverJobs(
      ...keys,
      maxStalledCount,
      bullJobKeyPrefix(prefix, queue),
      tokenPrefix,
    );
    return moved.map(([id, to, failing]) => ({ id, to, failing: failing === 1 }));
  }
}
