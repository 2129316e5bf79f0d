-- Reserves a batch's estimated tokens against its owner's day window, when the day has room for them all,
-- and records the hold its lines settle as they end. A batch whose hold exists reserved before (a replica
-- stopped while starting it): it is not reserved twice.
-- KEYS: the owner's day window, the batch's hold
-- ARGV: tokens, lines, the day limit, the day window's lifetime in ms, the hold's lifetime in ms
-- Returns {1 reserved or 0 refused, the day's count}: after the reservation when it was made.
local day = tonumber(redis.call('GET', KEYS[1]) or '0')
if redis.call('EXISTS', KEYS[2]) == 1 then return {1, day} end
local tokens = tonumber(ARGV[1])
if day + tokens > tonumber(ARGV[3]) then return {0, day} end
day = redis.call('INCRBY', KEYS[1], tokens)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('HSET', KEYS[2], 'tokens', tokens, 'lines', ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return {1, day}
