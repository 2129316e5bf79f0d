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
