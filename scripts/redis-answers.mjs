import { Redis } from 'ioredis';

/**
 * Whether a Redis at `url` answers PING now; never retries, never throws.
 * @param {string} url
 * @returns {Promise<boolean>}
 */
export async function redisAnswers(url) {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}
