import { Redis } from 'ioredis';

/**
 * Connections that fail fast instead of queueing commands while Redis is down,
 * so a request gets an error it can report rather than hanging.
 */
export function createRedis(url: string, name: string, options: { blocking?: boolean } = {}): Redis {
  return new Redis(url, {
    connectionName: name,
    enableOfflineQueue: !options.blocking,
    maxRetriesPerRequest: options.blocking ? null : 2,
    retryStrategy: (times) => Math.min(times * 100, 2000),
    lazyConnect: false,
  });
}
