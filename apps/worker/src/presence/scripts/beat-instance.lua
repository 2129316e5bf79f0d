-- One process's heartbeat for a deployment, scored in Redis's clock: whoever reads it compares it with
-- the same clock, so clock skew between machines cannot make a live worker look dead. It also keeps
-- the heartbeats' clock (see workerBeatsClockKey): when any process last beat, and since when beats
-- have landed with no gap longer than half a lapse. A longer gap means nobody could beat (their Redis
-- was down or failing over), so every beat is old for a reason other than death.
-- KEYS: the deployment's heartbeats, their clock (one deployment: one slot)
-- ARGV: instance, lapse in ms
-- Returns Redis's time now, in ms.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lapse = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + lapse, ARGV[1])
local last = tonumber(redis.call('HGET', KEYS[2], 'last'))
if not last or now - last > lapse / 2 then redis.call('HSET', KEYS[2], 'since', now) end
redis.call('HSET', KEYS[2], 'last', now)
redis.call('PEXPIRE', KEYS[2], lapse * 10)
return now
