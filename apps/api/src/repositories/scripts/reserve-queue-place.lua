-- Takes a place in a deployment's queue: its places are one sorted set of the requests admitted and not
-- yet taken by a worker, each scored by when its place lapses (so one a replica or worker that died left
-- behind frees itself). Lapsed places go, the rest are counted, and one more is taken if that is under
-- the limit: one script, so requests that arrive together cannot all see room that only one has. It
-- reads nothing of the workers or their queues, so it costs the same with one worker or a thousand.
--
-- With an API key named (fair shares), the places are shared by weight between the keys that asked for
-- one in the last ARGV[8] ms (admitted or not): a key's share is the limit times its weight over theirs.
-- A key under its share takes any free place. A key at or over it takes one only if the places still
-- free after it cover what the other asking keys are short of their shares: as the queue fills, a key
-- over its share is refused first, and a burst of one key leaves room for the others. A key's places are
-- its request ids (ARGV[9] .. key name, a set it adds to) still among the deployment's places: a worker
-- gives a place back there only, so they are counted with ZINTERCARD, and its set is pruned as it grows.
-- KEYS: the deployment's places, the keys asking lately (hash: name → '<ms> <weight>'), the key's ids
-- ARGV: now, limit, when the new place lapses, request id, the sets' time to live in ms,
--       key name ('' for no shares), its weight, how long an asking key competes (ms), prefix of keys' ids
-- Returns {1, places before} when admitted, {0, places} when the queue is full, and
-- {0, places, the key's places, its share} when the free places are held for other keys.
local places, asking, ids = KEYS[1], KEYS[2], KEYS[3]
local now, limit, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[5])
local key, weight, window = ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])
-- Places lapse by their score: without shares, the live ones are counted by it (one command), and the
-- lapsed ones (left by a process that died) are removed by about one request in 16 (its id's last
-- byte a multiple of 16: a uuid's last digit 0), rather than by every request. With shares, every
-- request removes them, since a key's places are counted by membership (ZINTERCARD).
local queued
if key == '' then
  queued = redis.call('ZCOUNT', places, '(' .. ARGV[1], '+inf')
  if string.byte(ARGV[4], -1) % 16 == 0 then redis.call('ZREMRANGEBYSCORE', places, '-inf', now) end
else
  redis.call('ZREMRANGEBYSCORE', places, '-inf', now)
  queued = redis.call('ZCARD', places)
end
if key ~= '' then
  redis.call('HSET', asking, key, now .. ' ' .. weight)
  redis.call('PEXPIRE', asking, ttl)
end
if queued >= limit then return {0, queued} end

-- The places `name` holds, counted up to `upTo` (ZINTERCARD stops there).
local function held(name, upTo)
  return redis.call('ZINTERCARD', 2, places, ARGV[9] .. name, 'LIMIT', math.max(1, math.ceil(upTo)))
end

if key ~= '' then
  local weights, sum = {}, 0
  local all = redis.call('HGETALL', asking)
  for i = 1, #all, 2 do
    local at, w = string.match(all[i + 1], '^(%S+) (%S+)$')
    if tonumber(at) < now - window then
      redis.call('HDEL', asking, all[i])
    else
      weights[all[i]] = tonumber(w)
      sum = sum + tonumber(w)
    end
  end
  local share = limit * weight / sum
  -- Under its share whatever it holds (the others' shares add up to the rest): no need to count.
  if queued + 1 > share then
    local mine = held(key, share)
    if mine >= share then
      local owed = 0
      for name, w in pairs(weights) do
        if name ~= key then
          local theirs = limit * w / sum
          owed = owed + math.max(0, theirs - held(name, theirs))
        end
      end
      if queued + 1 + owed > limit then return {0, queued, mine, math.floor(share)} end
    end
  end
end

redis.call('ZADD', places, ARGV[3], ARGV[4])
-- The places set is given no lifetime: Redis deletes it when a worker takes its last place, and what a
-- process that died leaves in it lapses by score and goes with a later request. One deployment's key at
-- most outlives its traffic, rather than a PEXPIRE on every request.
if key ~= '' then
  -- Scored by the latest its place could lapse: an id counts while it is also among the places.
  redis.call('ZADD', ids, now + ttl, ARGV[4])
  redis.call('ZREMRANGEBYSCORE', ids, '-inf', now)
  redis.call('PEXPIRE', ids, ttl)
  -- Ids whose places were taken by workers: pruned once they outnumber the places, so each is looked at
  -- about once, however many requests the key makes.
  local size = redis.call('ZCARD', ids)
  if size > 2 * (queued + 1) + 16 then
    for _, id in ipairs(redis.call('ZRANGE', ids, 0, -1)) do
      if not redis.call('ZSCORE', places, id) then redis.call('ZREM', ids, id) end
    end
  end
end
return {1, queued}
