export {
  MAX_RECONNECT_DELAY_MS,
  bullConnection,
  clusterOptions,
  connectionOptions,
  createRedis,
  releaseBullConnection,
  reportErrors,
  type BullConnection,
  type RedisClient,
  type ConnectionLogger,
  type ConnectionRole,
  type RedisSettings,
} from './redis-connections.js';
export { CommandConnection, type CommandConnectionOptions } from './command-connection.js';
export { Leases, LEASE_SCRIPTS } from './lease.js';
export { defineScripts, loadScript, type LoadedScript, type LuaScript } from './lua-scripts.js';
export { isRedisOutage } from './redis-outage.js';
export { QueueSet } from './queue-set.js';
