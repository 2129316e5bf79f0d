-- Records a job on an image already stored, and lengthens both keys' expiry (never shortens it).
-- KEYS: image, its jobs set
-- ARGV: job id, ttl in ms
-- Returns 1, or 0 when the image is not stored (its bytes must be sent: see hold-image.lua).
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SADD', KEYS[2], ARGV[1])
for _, key in ipairs(KEYS) do
  if redis.call('PTTL', key) < tonumber(ARGV[2]) then redis.call('PEXPIRE', key, ARGV[2]) end
end
return 1
