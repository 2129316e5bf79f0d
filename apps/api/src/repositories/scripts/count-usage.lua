-- Marks a reply counted unless it was, then adds its counters to its minute's new counts, which a later
-- pass (roll-up-usage.lua) adds to the minute, hour and day buckets: three commands a reply rather than
-- a dozen. One script: a replica stopping half-way cannot count a reply in part, and two replicas
-- reading one reply count it once.
-- KEYS: the reply's counted marker, its minute's new counts, its day's minutes with new counts
-- ARGV: the marker's lifetime in ms, the new counts' lifetime in ms, the group's field suffix, input,
--       output, cached and request counts, the minute's start (seconds)
-- Returns 1 when counted, 0 when the reply was counted before.
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
local names = {'input', 'output', 'cached', 'requests'}
local first = false
for c = 1, 4 do
  local n = tonumber(ARGV[3 + c])
  -- Counts are never negative and a zero is not written, so a field coming back as n was absent.
  if n ~= 0 and redis.call('HINCRBY', KEYS[2], names[c] .. ' ' .. ARGV[3], n) == n then first = true end
end
-- A field new to the hash is the only moment the hash may be new: then it is listed and given a lifetime.
if first then
  redis.call('SADD', KEYS[3], ARGV[8])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
return 1
