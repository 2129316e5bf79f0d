/**
 * The Lua scripts that take a dead worker's jobs over. Each reads or writes keys of one queue only (or
 * one heartbeat set), so on Redis Cluster each runs in one slot.
 */

/** Redis's clock in milliseconds, the clock heartbeats are scored in. */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * KEYS[1]: a deployment's heartbeats, KEYS[2]: their clock (see heartbeat.ts's BEAT); ARGV[1]: the
 * lapse in ms. The instances whose beat has lapsed (at most 100 a call), but none unless beats have
 * landed steadily for a whole lapse and are landing still: after an outage every beat is old, and the
 * live processes get a whole lapse to beat again before any of them is taken for dead.
 */
export const LAPSED = `${NOW}
local lapse = tonumber(ARGV[1])
local clock = redis.call('HMGET', KEYS[2], 'last', 'since')
local last, since = tonumber(clock[1]), tonumber(clock[2])
if not last or not since or now - last > lapse / 2 or now - since < lapse then return {} end
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%.0f', now), 'LIMIT', 0, 100)
`;

/** KEYS[1]: a deployment's heartbeats; ARGV[1]: an instance. Removes its heartbeat if it is still lapsed (1), else 0. */
export const FORGET = `${NOW}
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) < now then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`;

/**
 * Moves every active job of one queue whose lock a dead process holds back to waiting, as BullMQ's
 * moveStalledJobsToWait does once a lock has lapsed (bullmq 6.7), without waiting for the lock to lapse:
 * its lock goes, its stalled count rises (past the worker's maxStalledCount the job is marked to fail
 * when next taken, as BullMQ does), it goes back to the head of the waiting jobs (a prioritized job to
 * the head of its priority), a waiting worker is woken, and the queue's events say it stalled. The
 * worker that takes it counts a new attempt, so its reply's fence holds.
 *
 * A job is recognised by its lock token alone, which BullMQ makes `<worker id>:<n>`: a job another
 * worker took since has that worker's token, and a job whose lock already lapsed is BullMQ's to find.
 * Atomic, so of several workers taking a dead one's jobs over at once, one moves each job.
 *
 * KEYS: 1 active, 2 wait, 3 prioritized, 4 meta, 5 marker, 6 events, 7 stalled (the queue's keys).
 * ARGV: 1 the queue's key prefix (`<prefix>:<queue>:`), 2 the dead process's token prefix, 3 maxStalledCount.
 * Returns the ids of the jobs moved.
 */
export const TAKE_OVER = `
local rcall = redis.call
local activeKey, waitKey, prioritizedKey, metaKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local markerKey, eventsKey, stalledKey = KEYS[5], KEYS[6], KEYS[7]
local keyPrefix, tokenPrefix, maxStalled = ARGV[1], ARGV[2], tonumber(ARGV[3])
local maxEvents = rcall('HGET', metaKey, 'opts.maxLenEvents') or 10000
local moved = {}
for _, jobId in ipairs(rcall('LRANGE', activeKey, 0, -1)) do
  local jobKey = keyPrefix .. jobId
  local token = rcall('GET', jobKey .. ':lock')
  if token and string.sub(token, 1, #tokenPrefix) == tokenPrefix then
    rcall('DEL', jobKey .. ':lock')
    rcall('SREM', stalledKey, jobId)
    if rcall('LREM', activeKey, 1, jobId) > 0 then
      if rcall('HINCRBY', jobKey, 'stc', 1) > maxStalled then
        rcall('HSET', jobKey, 'defa', 'job stalled more than allowable limit')
      end
      local priority = tonumber(rcall('HGET', jobKey, 'priority')) or 0
      if priority > 0 then
        rcall('ZADD', prioritizedKey, priority * 0x100000000, jobId)
      else
        rcall('RPUSH', waitKey, jobId)
      end
      local meta = rcall('HMGET', metaKey, 'paused', 'concurrency')
      local held = meta[1] or (meta[2] and rcall('LLEN', activeKey) >= tonumber(meta[2]))
      if not held then rcall('ZADD', markerKey, 0, '0') end
      rcall('XADD', eventsKey, 'MAXLEN', '~', maxEvents, '*', 'event', 'waiting', 'jobId', jobId, 'prev', 'active')
      rcall('XADD', eventsKey, 'MAXLEN', '~', maxEvents, '*', 'event', 'stalled', 'jobId', jobId)
      moved[#moved + 1] = jobId
    end
  end
end
return moved
`;
