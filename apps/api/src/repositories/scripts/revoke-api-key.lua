-- Deletes a run-time API key: its name from the index and its record. The name is kept among the revoked,
-- never to be given again.
-- KEYS: the key index, the key's record, the revoked keys' names
-- ARGV: the key's name, its hex SHA-256
-- Returns 1 when deleted, 0 when the name no longer has that digest.
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
redis.call('SADD', KEYS[3], ARGV[1])
return 1
