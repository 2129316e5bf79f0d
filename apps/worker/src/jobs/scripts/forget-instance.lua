-- Removes an instance's heartbeat if it is still lapsed (by Redis's clock): one that beat again since it
-- was found lapsed stays.
-- KEYS: a deployment's heartbeats
-- ARGV: the instance
-- Returns 1 when removed, else 0.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) < now then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
