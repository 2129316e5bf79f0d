export {
  MAX_RECONNECT_DELAY_MS,
  connectionOptions,
  createRedis,
  reportErrors,
  type ConnectionLogger,
  type ConnectionRole,
  type RedisSettings,
} from './redis-connections.js';
