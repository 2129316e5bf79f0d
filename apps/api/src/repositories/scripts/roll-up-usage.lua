-- Adds one day's new usage counts (count-usage.lua) to their minute, hour and day buckets, each kept for
-- its width's time, and forgets them. One script: a count is in either its new counts or its buckets,
-- never both, so a read after this pass sees every count made before it, once.
-- KEYS: the day's minutes with new counts
-- ARGV: the day's key prefix (usageDayPrefix), the minute, hour and day buckets' lifetimes in ms
-- Returns the minutes added.
local minutes = redis.call('SMEMBERS', KEYS[1])
if #minutes == 0 then return 0 end
local day = ARGV[1]
for _, minute in ipairs(minutes) do
  local start = tonumber(minute)
  local new = day .. 'new:' .. minute
  local fields = redis.call('HGETALL', new)
  if #fields > 0 then
    local buckets = {
      day .. '1m:' .. minute,
      day .. '1h:' .. string.format('%d', start - start % 3600),
      day .. '1d:' .. string.format('%d', start - start % 86400),
    }
    for b = 1, 3 do
      for i = 1, #fields, 2 do redis.call('HINCRBY', buckets[b], fields[i], fields[i + 1]) end
      redis.call('PEXPIRE', buckets[b], ARGV[1 + b])
    end
    redis.call('DEL', new)
  end
end
redis.call('DEL', KEYS[1])
return #minutes
