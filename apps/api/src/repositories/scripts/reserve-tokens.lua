-- Checks a request's estimated tokens against its key's minute and day windows and, when both have room,
-- reserves them in both and records the hold that settle-tokens.lua later replaces by the real usage.
-- One script, so requests arriving together on any replica cannot all see room only one of them has.
-- KEYS: the key's minute window, its day window, the request's hold
-- ARGV: tokens, the minute limit (0: none), the day limit (0: none), the minute window's lifetime in ms,
--       the day window's lifetime in ms, the hold's lifetime in ms
-- Returns {1 reserved, 0 refused by the minute, -1 refused by the day; the minute's count; the day's count},
-- the counts after the reservation when it was made, as they stand when it was refused.
local tokens = tonumber(ARGV[1])
local minute = tonumber(redis.call('GET', KEYS[1]) or '0')
local day = tonumber(redis.call('GET', KEYS[2]) or '0')
local minuteLimit = tonumber(ARGV[2])
local dayLimit = tonumber(ARGV[3])
if minuteLimit > 0 and minute + tokens > minuteLimit then return {0, minute, day} end
if dayLimit > 0 and day + tokens > dayLimit then return {-1, minute, day} end
minute = redis.call('INCRBY', KEYS[1], tokens)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
day = redis.call('INCRBY', KEYS[2], tokens)
redis.call('PEXPIRE', KEYS[2], ARGV[5])
redis.call('SET', KEYS[3], tokens, 'PX', ARGV[6])
return {1, minute, day}
