-- Grants a batch lines to queue for one deployment, by its API key's weighted share of the deployment's
-- lines in flight. Each batch feeding the deployment has an entry (JSON: its key's name `k` and weight
-- `w`, its lines in flight `n`, when it said so `at`), written by the replica that drives it: the sum of
-- a key's entries is its lines in flight, whichever replicas drive its batches. A key may have up to its
-- weighted share of the capacity in flight (among the keys with an entry), split evenly between its
-- batches (so one batch does not hold back the key's next), or more while the others leave capacity
-- unused; lines are never taken back, so a batch over its share gets none until its lines in flight fall
-- below it. Lines queued together are served first in, first out, so keys with lines in flight in
-- proportion to their weights are served in that proportion.
-- KEYS: the deployment's batch shares
-- ARGV: now (ms), batch id, its key's name, its weight, its lines in flight now, lines it wants,
--       the deployment's capacity (lines in flight at once), how long an entry lasts unrenewed (ms)
-- Returns the lines granted (0 to the lines wanted); the batch's entry then counts them in flight.
local now, batch, key = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local weight, inflight, wanted = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local capacity, lapse = tonumber(ARGV[7]), tonumber(ARGV[8])
local entries = redis.call('HGETALL', KEYS[1])
local weights, batches = {}, {}
local total = inflight
for i = 1, #entries, 2 do
  local id = entries[i]
  if id ~= batch then
    local e = cjson.decode(entries[i + 1])
    if e.at < now - lapse then
      -- Its replica stopped driving it (died, or lost the lease) and no other has written since.
      redis.call('HDEL', KEYS[1], id)
    else
      weights[e.k] = e.w
      batches[e.k] = (batches[e.k] or 0) + 1
      total = total + e.n
    end
  end
end
weights[key] = weight
local sum = 0
for _, w in pairs(weights) do sum = sum + w end
-- The batch's part of its key's share: the key's batches together hold no more than the key's share.
local share = math.ceil(capacity * weight / sum / ((batches[key] or 0) + 1))
local room = math.max(share - inflight, capacity - total, 0)
local granted = math.min(wanted, room)
redis.call('HSET', KEYS[1], batch, cjson.encode({ k = key, w = weight, n = inflight + granted, at = now }))
redis.call('PEXPIRE', KEYS[1], lapse)
return granted
