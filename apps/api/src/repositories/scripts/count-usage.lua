-- Marks a reply counted unless it was, then appends its counts to its minute's log of new counts, which a
-- later pass (roll-up-usage.lua) adds to the minute, hour and day buckets. One APPEND of one line rather
-- than an HINCRBY per counter: three commands a reply in all. One script: a replica stopping half-way
-- cannot count a reply in part, and two replicas reading one reply count it once.
-- KEYS: the reply's counted marker, its minute's log of new counts, its day's minutes with new counts
-- ARGV: the marker's lifetime in ms, the log's lifetime in ms, the group (JSON: never a raw newline),
--       input, output, cached and request counts, the minute's start (seconds)
-- Returns 1 when counted, 0 when the reply was counted before.
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
local line = ARGV[4] .. ' ' .. ARGV[5] .. ' ' .. ARGV[6] .. ' ' .. ARGV[7] .. ' ' .. ARGV[3] .. '\n'
-- The log as long as this line alone is a log made now: the only moment it is listed and given a lifetime.
if redis.call('APPEND', KEYS[2], line) == #line then
  redis.call('SADD', KEYS[3], ARGV[8])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
return 1
