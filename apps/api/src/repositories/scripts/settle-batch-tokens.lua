-- Settles a batch's lines as they end: each takes its share of what the batch still holds off the day it
-- was reserved in (the last line the rest, so the hold comes off whole), and its usage goes on the day now.
-- With ARGV[3] = 1, the batch has ended: whatever it still holds comes off, for the lines that never ran.
-- KEYS: the batch's hold, the day window it was reserved in, the day window now
-- ARGV: tokens the lines used, lines ended, 1 when the batch has ended (else 0), the lifetime in ms of the day window now
-- Returns the tokens released from the hold.
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens') or '0')
local lines = tonumber(redis.call('HGET', KEYS[1], 'lines') or '0')
local ended = tonumber(ARGV[2])
local release = 0
if ARGV[3] == '1' or ended >= lines then
  release = tokens
  redis.call('DEL', KEYS[1])
elseif ended > 0 then
  release = math.floor(tokens * ended / lines)
  redis.call('HSET', KEYS[1], 'tokens', tokens - release, 'lines', lines - ended)
end
if release > 0 and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('DECRBY', KEYS[2], release) end
local used = tonumber(ARGV[1])
if used > 0 then
  redis.call('INCRBY', KEYS[3], used)
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
end
return release
