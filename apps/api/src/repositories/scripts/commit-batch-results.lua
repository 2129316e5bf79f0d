-- Commits results already written to the batch's files, if ARGV[1] still holds the batch's lease: their
-- lines become done (a bit each), and leave the window, the results leave the list, the counters and
-- the next part numbers move on. All or nothing, so a replica that dies after writing a part and before
-- this leaves the results to be written again, to the same part, by whoever takes the batch over.
-- KEYS: lease, done lines (a bitmap), lines in flight, results list, batch record (one batch: one slot)
-- ARGV: holder, lines newly written (JSON), lines taken (JSON), results taken, completed, failed, output parts, error parts,
--       prompt tokens of the lines that ran, of those the cached, prompt tokens of folded repeats
-- Returns 1 when committed, 0 when another replica holds the lease (nothing changed).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local written = cjson.decode(ARGV[2])
local lines = cjson.decode(ARGV[3])
for _, line in ipairs(written) do redis.call('SETBIT', KEYS[2], line, 1) end
if #lines > 0 then redis.call('HDEL', KEYS[3], unpack(lines)) end
redis.call('LTRIM', KEYS[4], tonumber(ARGV[4]), -1)
redis.call('HINCRBY', KEYS[5], 'completed', tonumber(ARGV[5]))
redis.call('HINCRBY', KEYS[5], 'failed', tonumber(ARGV[6]))
redis.call('HINCRBY', KEYS[5], 'output_parts', tonumber(ARGV[7]))
redis.call('HINCRBY', KEYS[5], 'error_parts', tonumber(ARGV[8]))
-- What the batch's plan saved, counted once per line with the rest (the batch object shows it).
if tonumber(ARGV[9]) > 0 then redis.call('HINCRBY', KEYS[5], 'prompt_tokens', tonumber(ARGV[9])) end
if tonumber(ARGV[10]) > 0 then redis.call('HINCRBY', KEYS[5], 'cached_tokens', tonumber(ARGV[10])) end
if tonumber(ARGV[11]) > 0 then redis.call('HINCRBY', KEYS[5], 'folded_tokens', tonumber(ARGV[11])) end
return 1
