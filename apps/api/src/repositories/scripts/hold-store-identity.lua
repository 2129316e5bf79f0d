-- Holds the file store's identity on behalf of a holder. One hash per prefix (one key, so one slot):
-- `identity`, and `h:<holder>` -> when that holder's hold lapses. Lapsed holds are dropped first;
-- another identity stands only while one of its holders lives.
-- KEYS: store identity
-- ARGV: identity, holder, now in ms, ttl in ms
-- Returns the identity recorded now: ARGV[1], or the other one live replicas hold.
local now = tonumber(ARGV[3])
local mine = 'h:' .. ARGV[2]
local fields = redis.call('HGETALL', KEYS[1])
local current, others = nil, 0
for i = 1, #fields, 2 do
  local field, value = fields[i], fields[i + 1]
  if field == 'identity' then current = value
  elseif tonumber(value) <= now then redis.call('HDEL', KEYS[1], field)
  elseif field ~= mine then others = others + 1 end
end
if current and current ~= ARGV[1] and others > 0 then return current end
if current ~= ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'identity', ARGV[1], mine, now + tonumber(ARGV[4]))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return ARGV[1]
