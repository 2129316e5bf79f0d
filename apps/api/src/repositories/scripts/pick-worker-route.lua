-- For each live worker, the longest run of the request's block hashes its set holds: a binary search,
-- since a worker holding block i holds every block before it (the hashes are chained). Then the best
-- worker with a free sequence; its count goes down by one, so the next request routed before the
-- worker reports again sees it one fuller. One script: one round trip, and replicas never read a
-- count another is changing. The workers' block sets are named from ARGV[3] (one deployment's keys:
-- on a cluster they share its slot).
-- KEYS: the deployment's live workers, its workers' free sequences
-- ARGV: now in ms, fewest blocks that count as a hit, block sets' key prefix, the block hashes...
-- Returns {'hit', worker, blocks held}, {'saturated', '', 0} or {'miss', '', 0}.
local live = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf')
local minBlocks = tonumber(ARGV[2])
local n = #ARGV - 3
local best, bestLength, bestFree, held = nil, 0, 0, false
for _, id in ipairs(live) do
  -- Heartbeats name a worker by its id; its keys by that id made safe for names (routeWorkerName).
  local worker = (string.gsub(id, '[^%w%._%-]', '_'))
  local key = ARGV[3] .. worker
  local lo, hi = 0, n
  while lo < hi do
    local mid = math.floor((lo + hi + 1) / 2)
    if redis.call('SISMEMBER', key, ARGV[3 + mid]) == 1 then lo = mid else hi = mid - 1 end
  end
  if lo >= minBlocks then
    held = true
    local free = tonumber(redis.call('HGET', KEYS[2], worker) or '0') or 0
    if free > 0 and (lo > bestLength or (lo == bestLength and free > bestFree)) then
      best, bestLength, bestFree = worker, lo, free
    end
  end
end
if best then
  redis.call('HINCRBY', KEYS[2], best, -1)
  return {'hit', best, bestLength}
end
if held then return {'saturated', '', 0} end
return {'miss', '', 0}
