import { describe, it, expect } from '@jest/globals';
import {
  CONNECT_TIMEOUT_MS,
  MAX_RECONNECT_DELAY_MS,
  clusterOptions,
  connectionOptions,
  type RedisSettings,
} from './redis-connections.js';

const single: RedisSettings = {
  url: 'redis://:secret@cache:6379/1',
  sentinel: null,
  cluster: null,
  prefix: 'conveyor',
  replyTtlMs: 1000,
  responseTtlMs: 1000,
  jobRetentionSeconds: 60,
};
const sentinels: RedisSettings = {
  ...single,
  sentinel: {
    sentinels: [
      { host: 's1', port: 26379 },
      { host: 's2', port: 26380 },
    ],
    name: 'conveyor',
    password: 'watch',
  },
};

describe('connectionOptions', () => {
  it('reaches a single Redis by its URL, reconnecting at most a second apart', () => {
    const options = connectionOptions(single, 'conveyor-test', 'command');
    expect(options).toMatchObject({
      url: single.url,
      connectionName: 'conveyor-test',
      connectTimeout: CONNECT_TIMEOUT_MS,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 2,
    });
    expect(options.sentinels).toBeUndefined();
    const delays = [1, 2, 5, 10, 50, 1000].map((attempt) => Number(options.retryStrategy?.(attempt)));
    expect(delays).toEqual([100, 200, 500, 1000, 1000, 1000]);
    expect(Math.max(...delays)).toBe(MAX_RECONNECT_DELAY_MS);
  });

  it('holds background writes, blocking and subscriber commands for as long as Redis is away', () => {
    for (const role of ['background', 'blocking', 'subscriber'] as const)
      expect(connectionOptions(single, role, role)).toMatchObject({
        enableOfflineQueue: true,
        maxRetriesPerRequest: null,
      });
  });

  it('asks the sentinels for the primary, keeps the data nodes’ password from the URL, and only stays on a primary', () => {
    const options = connectionOptions(sentinels, 'conveyor-test', 'blocking');
    expect(options).toMatchObject({
      url: single.url,
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26380 },
      ],
      name: 'conveyor',
      sentinelPassword: 'watch',
      role: 'master',
      enableTLSForSentinelMode: false,
    });
    expect(options.failoverDetector).toBeUndefined();
    expect(connectionOptions({ ...sentinels, url: 'rediss://cache' }, 'x', 'command').enableTLSForSentinelMode).toBe(
      true,
    );
  });

  it('reconnects (to whatever the sentinels now name) when a node answers that it became a replica', () => {
    const { reconnectOnError } = connectionOptions(sentinels, 'x', 'command');
    expect(reconnectOnError(new Error("READONLY You can't write against a read only replica."))).toBe(true);
    expect(
      reconnectOnError(
        new Error("ERR Error running script: @user_script:1: -READONLY You can't write against a read only replica."),
      ),
    ).toBe(true);
    expect(reconnectOnError(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(
      false,
    );
  });
});

describe('clusterOptions', () => {
  const cluster: RedisSettings = {
    ...single,
    url: 'rediss://app:s%40cret@ignored:6379',
    cluster: { nodes: [{ host: '10.0.0.1', port: 7000 }] },
  };

  it('gives every node connection the URL’s user, password and TLS, and reads only from primaries', () => {
    const options = clusterOptions(cluster, 'conveyor-test', 'command');
    expect(options).toMatchObject({
      scaleReads: 'master',
      enableOfflineQueue: false,
      maxRedirections: 16,
      redisOptions: {
        connectionName: 'conveyor-test',
        username: 'app',
        password: 's@cret',
        tls: {},
        connectTimeout: CONNECT_TIMEOUT_MS,
        maxRetriesPerRequest: 2,
      },
    });
    expect(clusterOptions({ ...cluster, url: 'redis://ignored' }, 'x', 'command').redisOptions).not.toHaveProperty(
      'password',
    );
  });

  it('fails a request’s command within about two seconds, and holds the others through a failover', () => {
    const command = clusterOptions(cluster, 'x', 'command');
    expect(Number(command.maxRedirections) * Number(command.retryDelayOnFailover)).toBeLessThanOrEqual(2000);
    for (const role of ['background', 'blocking', 'subscriber'] as const) {
      const options = clusterOptions(cluster, role, role);
      expect(options).toMatchObject({ enableOfflineQueue: true, redisOptions: { maxRetriesPerRequest: null } });
      expect(Number(options.maxRedirections) * Number(options.retryDelayOnFailover)).toBeGreaterThanOrEqual(60_000);
    }
  });
});
