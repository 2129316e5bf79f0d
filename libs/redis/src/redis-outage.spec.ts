import { isRedisOutage } from './redis-outage.js';

describe('isRedisOutage', () => {
  it('tells the errors of a Redis out of reach', () => {
    for (const message of [
      "Stream isn't writeable and enableOfflineQueue options is false",
      'Connection is closed.',
      'Reached the max retries per request limit (which is 2). Refer to "maxRetriesPerRequest" option for details.',
      'connect ECONNREFUSED 127.0.0.1:6379',
      'LOADING Redis is loading the dataset in memory',
      'CLUSTERDOWN The cluster is down',
    ])
      expect(isRedisOutage(new Error(message))).toBe(true);
    const named = new Error('whatever');
    named.name = 'MaxRetriesPerRequestError';
    expect(isRedisOutage(named)).toBe(true);
  });

  it('leaves alone an error Redis answered a command with, and what is not an error', () => {
    expect(isRedisOutage(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(false);
    expect(isRedisOutage(new Error('ERR unknown command'))).toBe(false);
    expect(isRedisOutage('Connection is closed.')).toBe(false);
  });
});
