-- Stores an image's bytes unless they are there already, records a job on it, and lengthens both
-- keys' expiry (never shortens it).
-- KEYS: image, its jobs set
-- ARGV: job id, ttl in ms, the image's bytes
-- Returns 1.
redis.call('SET', KEYS[1], ARGV[3], 'NX', 'PX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
for _, key in ipairs(KEYS) do
  if redis.call('PTTL', key) < tonumber(ARGV[2]) then redis.call('PEXPIRE', key, ARGV[2]) end
end
return 1
