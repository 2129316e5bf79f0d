-- Stores a new run-time API key unless its name is taken, now or by a revoked key (whose files and batches
-- a new key of its name would own): the name in the index, then its record, and marks run-time keys in
-- use (authentication on from then on).
-- KEYS: the key index, the new key's record, the in-use mark, the revoked keys' names
-- ARGV: the key's name, the hex SHA-256 of the key, then the record's fields and values
-- Returns 1 when stored, 0 when a key of that name exists or existed.
if redis.call('SISMEMBER', KEYS[4], ARGV[1]) == 1 then return 0 end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 3))
redis.call('SET', KEYS[3], '1')
return 1
