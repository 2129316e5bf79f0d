-- Drops a holder's hold on the file store's identity, and the record with its last holder.
-- KEYS: store identity
-- ARGV: holder
-- Returns 1 when the record went with this holder, 0 while others still hold it.
redis.call('HDEL', KEYS[1], 'h:' .. ARGV[1])
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(field, 1, 2) == 'h:' then return 0 end
end
redis.call('DEL', KEYS[1])
return 1
