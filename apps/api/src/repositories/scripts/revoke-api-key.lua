-- Deletes a run-time API key: its name from the index and its record.
-- KEYS: the key index, the key's record
-- ARGV: the key's name, its hex SHA-256
-- Returns 1 when deleted, 0 when the name no longer has that digest.
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return 1
