-- Adds one day's new usage counts (count-usage.lua) to their minute, hour and day buckets, each kept for
-- its width's time, and forgets them. One script: a count is in either its new counts or its buckets,
-- never both, so a read after this pass sees every count made before it, once.
-- A minute's new counts are a log, a line a reply: '<input> <output> <cached> <requests> <group>'. They
-- were a hash laid out as a bucket ('new:<minute>') before: one left by an earlier version is added too.
-- KEYS: the day's minutes with new counts
-- ARGV: the day's key prefix (usageDayPrefix), the minute, hour and day buckets' lifetimes in ms
-- Returns the minutes added.
local minutes = redis.call('SMEMBERS', KEYS[1])
if #minutes == 0 then return 0 end
local day = ARGV[1]
local names = {'input', 'output', 'cached', 'requests'}
for _, minute in ipairs(minutes) do
  local start = tonumber(minute)
  -- field -> sum, and the fields in the order first seen (a counter that stayed 0 is not written).
  local sums, order = {}, {}
  local function add(field, n)
    if n == 0 then return end
    if not sums[field] then
      sums[field] = 0
      order[#order + 1] = field
    end
    sums[field] = sums[field] + n
  end
  local log = day .. 'log:' .. minute
  local text = redis.call('GET', log)
  if text then
    for a, b, c, d, group in string.gmatch(text, '(%d+) (%d+) (%d+) (%d+) ([^\n]*)\n') do
      local counts = {tonumber(a), tonumber(b), tonumber(c), tonumber(d)}
      for i = 1, 4 do add(names[i] .. ' ' .. group, counts[i]) end
    end
  end
  local earlier = day .. 'new:' .. minute
  local fields = redis.call('HGETALL', earlier)
  for i = 1, #fields, 2 do add(fields[i], tonumber(fields[i + 1])) end
  if #order > 0 then
    local buckets = {
      day .. '1m:' .. minute,
      day .. '1h:' .. string.format('%d', start - start % 3600),
      day .. '1d:' .. string.format('%d', start - start % 86400),
    }
    for b = 1, 3 do
      for _, field in ipairs(order) do
        redis.call('HINCRBY', buckets[b], field, string.format('%d', sums[field]))
      end
      redis.call('PEXPIRE', buckets[b], ARGV[1 + b])
    end
  end
  if text then redis.call('DEL', log) end
  if #fields > 0 then redis.call('DEL', earlier) end
end
redis.call('DEL', KEYS[1])
return #minutes
