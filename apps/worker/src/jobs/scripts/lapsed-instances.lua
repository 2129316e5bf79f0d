-- The instances whose heartbeat has lapsed (at most 100 a call), but none unless beats have landed
-- steadily for a whole lapse and are landing still: after an outage every beat is old, and the live
-- processes get a whole lapse to beat again before any of them is taken for dead. Scored in Redis's
-- clock (see presence/scripts/beat-instance.lua), not any worker's.
-- KEYS: a deployment's heartbeats, their clock
-- ARGV: the lapse in ms
-- Returns the lapsed instances.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lapse = tonumber(ARGV[1])
local clock = redis.call('HMGET', KEYS[2], 'last', 'since')
local last, since = tonumber(clock[1]), tonumber(clock[2])
if not last or not since or now - last > lapse / 2 or now - since < lapse then return {} end
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%.0f', now), 'LIMIT', 0, 100)
