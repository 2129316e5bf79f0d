-- Sets and removes settings of a run-time API key, if the name still has the digest the caller read
-- (a rotation in between moved the record).
-- KEYS: the key index, the key's record
-- ARGV: the key's name, its hex SHA-256, how many fields to set (n), n field and value pairs, then the fields to remove
-- Returns 1 when changed, 0 when the name no longer has that digest.
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] or redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local n = tonumber(ARGV[3])
if n > 0 then redis.call('HSET', KEYS[2], unpack(ARGV, 4, 3 + 2 * n)) end
if #ARGV > 3 + 2 * n then redis.call('HDEL', KEYS[2], unpack(ARGV, 4 + 2 * n)) end
return 1
