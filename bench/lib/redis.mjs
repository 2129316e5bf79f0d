// Redis chores of a bench run: its own key prefix is removed afterwards.
/**
 * Deletes every key under `prefix:`; resolves with how many there were.
 * @param {string} redisUrl
 * @param {string} prefix
 * @returns {Promise<number>}
 */
export async function deleteKeys(redisUrl, prefix) {
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}
