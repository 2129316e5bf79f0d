-- Replaces a request's reserved tokens by what it used: the hold comes off the windows it was reserved in
-- (those that have not ended), the usage goes on the windows of now. The hold is taken once, so a reply
-- whose end two replicas read (a resumed stream) is settled once.
-- KEYS: the request's hold, its minute window, its day window, the minute window now, the day window now
--       (its windows: those it was reserved in)
-- ARGV: tokens used, the lifetime in ms of the minute window now, of the day window now
-- Returns the tokens the hold had, or -1 when there was none (settled before, or lapsed).
local held = redis.call('GET', KEYS[1])
if not held then return -1 end
redis.call('DEL', KEYS[1])
for i = 2, 3 do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('DECRBY', KEYS[i], held) end
end
local used = tonumber(ARGV[1])
if used > 0 then
  redis.call('INCRBY', KEYS[4], used)
  redis.call('PEXPIRE', KEYS[4], ARGV[2])
  redis.call('INCRBY', KEYS[5], used)
  redis.call('PEXPIRE', KEYS[5], ARGV[3])
end
return tonumber(held)
