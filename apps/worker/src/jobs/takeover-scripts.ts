/**
 * The Lua scripts that tell which workers died, from their heartbeats. Each reads or writes one
 * deployment's heartbeat keys, so on Redis Cluster each runs in one slot. Moving a dead worker's jobs
 * is BullMQ's business, in libs/bullmq-seam.
 */

/** Redis's clock in milliseconds, the clock heartbeats are scored in. */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * KEYS[1]: a deployment's heartbeats, KEYS[2]: their clock (see heartbeat.ts's BEAT); ARGV[1]: the
 * lapse in ms. The instances whose beat has lapsed (at most 100 a call), but none unless beats have
 * landed steadily for a whole lapse and are landing still: after an outage every beat is old, and the
 * live processes get a whole lapse to beat again before any of them is taken for dead.
 */
export const LAPSED = `${NOW}
local lapse = tonumber(ARGV[1])
local clock = redis.call('HMGET', KEYS[2], 'last', 'since')
local last, since = tonumber(clock[1]), tonumber(clock[2])
if not last or not since or now - last > lapse / 2 or now - since < lapse then return {} end
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%.0f', now), 'LIMIT', 0, 100)
`;

/** KEYS[1]: a deployment's heartbeats; ARGV[1]: an instance. Removes its heartbeat if it is still lapsed (1), else 0. */
export const FORGET = `${NOW}
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) < now then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`;
