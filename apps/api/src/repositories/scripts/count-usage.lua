-- Marks a reply counted unless it was, then adds its counters to its minute, hour and day buckets, each
-- kept for its width's time. One script: a replica stopping half-way cannot count a reply into some
-- buckets and not others, and two replicas reading one reply count it once.
-- KEYS: the reply's counted marker, its minute bucket, its hour bucket, its day bucket
-- ARGV: the marker's lifetime in ms, the three buckets' lifetimes in ms, the group's field suffix, input, output, cached and request counts
-- Returns 1 when counted, 0 when the reply was counted before.
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
local names = {'input', 'output', 'cached', 'requests'}
for i = 2, #KEYS do
  for c = 1, 4 do
    local n = tonumber(ARGV[5 + c])
    if n ~= 0 then redis.call('HINCRBY', KEYS[i], names[c] .. ' ' .. ARGV[5], n) end
  end
  redis.call('PEXPIRE', KEYS[i], ARGV[i])
end
return 1
