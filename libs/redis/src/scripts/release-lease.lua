-- Gives up a lease only if its holder still holds it: a holder that lost it (it lapsed and another
-- took it) cannot end the new holder's lease.
-- KEYS: lease
-- ARGV: holder
-- Returns 1 when released, 0 when ARGV[1] does not hold it.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
