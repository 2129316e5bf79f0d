-- Ends a batch: writes its final status (and the fields that go with it) and the event its owner's webhook
-- is told of, in one step, unless the batch has ended already. So a batch ends once, with one event, and
-- whoever sees it ended (any replica, after the one that ended it died) finds the event to deliver.
-- KEYS: batch record
-- ARGV: fields and their JSON values, flattened (field, value, field, value, ...)
-- Returns 1 when the batch ended now, 0 when it had ended before (or has no record) and nothing changed.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 0 end
if status == '"completed"' or status == '"failed"' or status == '"expired"' or status == '"cancelled"' then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
