-- Takes a place in a deployment's queue: its places are one sorted set of the requests admitted and not
-- yet taken by a worker, each scored by when its place lapses (so one a replica or worker that died left
-- behind frees itself). Lapsed places go, the rest are counted, and one more is taken if that is under
-- the limit: one script, so requests that arrive together cannot all see room that only one has. It
-- reads nothing of the workers or their queues, so it costs the same with one worker or a thousand.
-- KEYS: the deployment's places
-- ARGV: now, limit, when the new place lapses, request id, the set's time to live in ms
-- Returns {1, places before} when admitted, {0, places} when the queue is full.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local queued = redis.call('ZCARD', KEYS[1])
if queued >= tonumber(ARGV[2]) then return {0, queued} end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {1, queued}
