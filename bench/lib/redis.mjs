// Redis chores of a bench run: its own key prefix is removed afterwards.
/**
 * Deletes every key under `prefix:` on each Redis named; resolves with how many there were. On a Redis
 * Cluster, name every primary: each is scanned for the keys it holds, and they are deleted one per
 * command, since a cluster refuses a DEL of keys in several slots.
 * @param {string | string[]} redisUrls
 * @param {string} prefix
 * @returns {Promise<number>}
 */
export async function deleteKeys(redisUrls, prefix) {
  const { Redis } = await import('ioredis');
  let deleted = 0;
  for (const url of [redisUrls].flat()) {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 });
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (!keys.length) continue;
        const pipeline = redis.pipeline();
        for (const key of keys) pipeline.del(key);
        for (const [err, n] of (await pipeline.exec()) ?? []) if (!err) deleted += Number(n);
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }
  return deleted;
}
