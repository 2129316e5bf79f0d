-- Moves a run-time API key's record to a new digest, with a new hint, in one step: from then on the old
-- key matches nothing, and the new one matches the same name and settings.
-- KEYS: the key index, the record under the old digest, the record under the new digest
-- ARGV: the key's name, the old hex SHA-256, the new hex SHA-256, the new hint
-- Returns 1 when rotated, 0 when the name no longer has the old digest.
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
local fields = redis.call('HGETALL', KEYS[2])
if #fields == 0 then return 0 end
redis.call('DEL', KEYS[3])
redis.call('HSET', KEYS[3], unpack(fields))
redis.call('HSET', KEYS[3], 'hint', ARGV[4])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('DEL', KEYS[2])
return 1
