import { describe, expect, it } from '@jest/globals';
import { loadConfig } from './load-config.js';
import { configError } from '../../../test/support/config-error.js';

describe('loadConfig', () => {
  it('reads the sentinels, the primary they watch and their password', () => {
    const config = loadConfig({
      REDIS_SENTINELS: 'sentinel-a:26379, 10.0.0.2:26380,[fd00::3]:26381',
      REDIS_SENTINEL_NAME: 'conveyor',
      REDIS_SENTINEL_PASSWORD: 'watch',
      REDIS_URL: 'rediss://:data@ignored:6379/2',
    });
    expect(config.redis.sentinel).toEqual({
      sentinels: [
        { host: 'sentinel-a', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
        { host: 'fd00::3', port: 26381 },
      ],
      name: 'conveyor',
      password: 'watch',
    });
    // The data nodes' password, database and TLS still come from the URL.
    expect(config.redis.url).toBe('rediss://:data@ignored:6379/2');
  });

  it('reads a cluster’s seed nodes, its password and TLS still from the URL', () => {
    const config = loadConfig({
      REDIS_CLUSTER_NODES: 'node-a:7000, 10.0.0.2:7001,[fd00::3]:7002',
      REDIS_URL: 'rediss://:data@ignored:6379',
    });
    expect(config.redis.cluster).toEqual({
      nodes: [
        { host: 'node-a', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: 'fd00::3', port: 7002 },
      ],
    });
    expect(config.redis.sentinel).toBeNull();
    expect(config.redis.url).toBe('rediss://:data@ignored:6379');
  });

  it('refuses cluster seeds beside sentinels, a database other than 0, and malformed entries, each in one line', () => {
    const both = configError({
      REDIS_CLUSTER_NODES: 'a:7000',
      REDIS_SENTINELS: 's:26379',
      REDIS_SENTINEL_NAME: 'conveyor',
    });
    expect(both.problems).toEqual([
      'REDIS_CLUSTER_NODES and REDIS_SENTINELS are exclusive: a Redis Cluster fails over on its own, without sentinels',
    ]);
    expect(configError({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_URL: 'redis://cache/2' }).problems).toEqual([
      'REDIS_URL names database 2, but a Redis Cluster only has database 0: drop it from the URL',
    ]);
    expect(configError({ REDIS_CLUSTER_NODES: 'a:7000,nohost' }).problems).toEqual([
      'REDIS_CLUSTER_NODES entries must be host:port with a port from 1 to 65535 (got "nohost")',
    ]);
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_URL: 'redis://cache/0' }).redis.cluster).not.toBeNull();
  });

  it('refuses a sentinel list without a primary name, malformed entries, and sentinel settings without sentinels', () => {
    const error = configError({ REDIS_SENTINELS: 'good:26379,nohost,:26379,far:70000,two:1:2,,' });
    expect(error.problems).toEqual([
      "REDIS_SENTINELS needs REDIS_SENTINEL_NAME, the primary's name as the sentinels know it",
      'REDIS_SENTINELS entries must be host:port with a port from 1 to 65535 (got "nohost")',
      'REDIS_SENTINELS entries must be host:port with a port from 1 to 65535 (got ":26379")',
      'REDIS_SENTINELS entries must be host:port with a port from 1 to 65535 (got "far:70000")',
      'REDIS_SENTINELS entries must be host:port with a port from 1 to 65535 (got "two:1:2")',
      'REDIS_SENTINELS entries must be host:port with a port from 1 to 65535 (got "")',
      'REDIS_SENTINELS entries must be host:port with a port from 1 to 65535 (got "")',
    ]);
    expect(configError({ REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_NAME: 'my master' }).message).toContain(
      'REDIS_SENTINEL_NAME',
    );
    const orphans = configError({ REDIS_SENTINEL_NAME: 'conveyor', REDIS_SENTINEL_PASSWORD: 'x' });
    expect(orphans.problems).toHaveLength(2);
    expect(orphans.message).toContain('REDIS_SENTINEL_NAME is set but REDIS_SENTINELS is not');
    expect(orphans.message).toContain('REDIS_SENTINEL_PASSWORD is set but REDIS_SENTINELS is not');
  });

  it('puts REDIS_PASSWORD in the URL, and refuses it next to a password already there', () => {
    expect(loadConfig({ REDIS_PASSWORD: 'p@ss:/w rd' }).redis.url).toBe('redis://:p%40ss%3A%2Fw%20rd@127.0.0.1:6379');
    expect(configError({ REDIS_URL: 'redis://:one@cache:6379', REDIS_PASSWORD: 'two' }).message).toContain(
      'REDIS_PASSWORD and a password in REDIS_URL are exclusive',
    );
  });
});
