-- Extends a lease only while its holder still holds it: a lease that lapsed (and perhaps went to
-- another holder meanwhile) is neither extended nor taken.
-- KEYS: lease
-- ARGV: holder, ttl in ms
-- Returns 1 when extended, 0 when ARGV[1] does not hold it.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
