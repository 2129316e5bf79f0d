-- Counts one batch line as queued, unless the batch's counts are gone (it ended) or the line is not past
-- the last one counted. One script on one deployment's key, so two replicas feeding the same batch in
-- turn (a lease taken over) never count a line twice.
-- KEYS: the deployment's unqueued-lines hash
-- ARGV: batch id, line number
-- Returns 1 when counted, 0 when not.
local left = redis.call('HGET', KEYS[1], ARGV[1])
if not left then return 0 end
local through = ARGV[1] .. ':through'
if tonumber(ARGV[2]) <= tonumber(redis.call('HGET', KEYS[1], through) or '0') then return 0 end
redis.call('HSET', KEYS[1], through, ARGV[2])
if tonumber(left) > 0 then redis.call('HINCRBY', KEYS[1], ARGV[1], -1) end
return 1
