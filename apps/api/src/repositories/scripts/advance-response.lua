-- Moves a stored response on only from a status that may still change, in one step (a cancel may land
-- at any time), and keeps it for its TTL from now.
-- KEYS: response
-- ARGV: new status, response (JSON), context (JSON, or '' to keep the stored one), ttl in ms
-- Returns 1 when moved, 0 when the response had already ended.
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'queued' and status ~= 'in_progress' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'response', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'context', ARGV[3]) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
