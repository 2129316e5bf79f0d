-- A job no longer refers to an image; with no job left, the image and its jobs set are deleted.
-- KEYS: image, its jobs set
-- ARGV: job id
-- Returns 1 when the image went with this job, 0 while other jobs refer to it.
redis.call('SREM', KEYS[2], ARGV[1])
if redis.call('SCARD', KEYS[2]) > 0 then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
