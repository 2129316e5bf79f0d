-- Moves every active job of one queue whose lock a dead process holds back to waiting, as BullMQ
-- 6.7.0's moveStalledJobsToWait does with a job whose lock has lapsed, without waiting for the lock to
-- lapse, and on the keys it reads (its `stalled-check` aside, and `paused`: in 6.7.0 a paused queue keeps
-- its jobs in `wait`, its meta saying it is paused). For each job: its lock goes and it leaves the
-- stalled set (as removeLock does); it leaves the active list; its stalled count (`stc`) rises, and past
-- `maxStalledCount` it is marked to fail when next taken (`defa`), unless it is a repeatable job (its
-- `rjk` names a scheduler in `repeat`); it goes back to the head of the waiting jobs, and a waiting
-- worker is woken unless the queue is paused or at its concurrency (moveJobToWait); the queue's events
-- say it waits and stalled. One rule differs, taken from moveJobFromActiveToWait: a prioritized job
-- goes back to the head of its priority, not into the plain wait list, so a request stays in its
-- service tier's band and a batch line behind them all. The worker that takes it counts a new attempt,
-- so its reply's fence holds.
--
-- A job is recognised by its lock token alone, which a worker makes `<worker id>:<n>` (see
-- `claimTokens`): a job another worker took since has that worker's token, and a job whose lock already
-- lapsed is BullMQ's own stalled check's to find. Atomic, so of several workers taking a dead one's
-- jobs over at once, one moves each job. Every key is the queue's, so on a cluster it runs in one slot.
-- KEYS: the queue's stalled set, wait list, active list, prioritized set, meta hash, marker, events stream, repeat set
-- ARGV: maxStalledCount, the queue's job key prefix, the dead process's token prefix
-- Returns each job moved as {id, where it went (`wait` or `prioritized`), 1 when marked to fail else 0,
-- its priority}.
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
      moved[#moved + 1] = {jobId, to, failing, priority}
    end
  end
end
return moved
