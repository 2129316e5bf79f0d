-- Counts batch lines as queued, each unless the batch's counts are gone (it ended) or the line is not
-- past the last one counted. The lines of one tick come in one call, in the order they were fed. One
-- script on one deployment's key, so two replicas feeding the same batch in turn (a lease taken over)
-- never count a line twice.
-- KEYS: the deployment's unqueued-lines hash
-- ARGV: batch id, then the lines' positions, rising
-- Returns how many were counted.
local left = redis.call('HGET', KEYS[1], ARGV[1])
if not left then return 0 end
local through_field = ARGV[1] .. ':through'
local through = tonumber(redis.call('HGET', KEYS[1], through_field) or '0')
local counted = 0
for i = 2, #ARGV do
  local line = tonumber(ARGV[i])
  if line > through then
    through = line
    counted = counted + 1
  end
end
if counted == 0 then return 0 end
redis.call('HSET', KEYS[1], through_field, through)
local take = math.min(counted, math.max(0, tonumber(left)))
if take > 0 then redis.call('HINCRBY', KEYS[1], ARGV[1], -take) end
return counted
