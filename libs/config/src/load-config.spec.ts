import { describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { loadConfig } from './load-config.js';
import { configError } from '../../../test/support/config-error.js';

describe('loadConfig', () => {
  it('has working defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config.api.port).toBe(8000);
    expect(config.api.host).toBe('0.0.0.0');
    expect(config.redis).toEqual({
      url: 'redis://127.0.0.1:6379',
      sentinel: null,
      cluster: null,
      prefix: 'conveyor',
      replyTtlMs: 600_000,
      responseTtlMs: 86_400_000,
      jobRetentionSeconds: 3600,
    });
    expect(config.logLevel).toBe('log');
    expect(config.modelsDir).toBe(resolve('models'));
    expect(config.deployments).toHaveLength(1);
    expect(config.deployments[0]).toMatchObject({
      id: 'conveyor-tiny',
      model: 'tiny',
      contextSize: 4096,
      threads: 1,
      flashAttention: 'auto',
    });
  });

  it('treats blank variables as unset and trims values', () => {
    const config = loadConfig({ PORT: '  ', REDIS_PREFIX: '', THREADS: ' 4 ' });
    expect(config.api.port).toBe(8000);
    expect(config.redis.prefix).toBe('conveyor');
    expect(config.deployments[0].threads).toBe(4);
  });

  it('reads the variables it is given', () => {
    const config = loadConfig({
      PORT: '9000',
      REDIS_URL: 'rediss://cache:6380',
      REDIS_PREFIX: 'test_1',
      LOG_LEVEL: 'debug',
      CONTEXT_SIZE: '2048',
      PARALLEL: '2',
      THREADS: '8',
      FLASH_ATTENTION: 'off',
    });
    expect(config.api.port).toBe(9000);
    expect(config.redis).toEqual({
      url: 'rediss://cache:6380',
      sentinel: null,
      cluster: null,
      prefix: 'test_1',
      replyTtlMs: 600_000,
      responseTtlMs: 86_400_000,
      jobRetentionSeconds: 3600,
    });
    expect(config.logLevel).toBe('debug');
    expect(config.deployments[0]).toMatchObject({ contextSize: 2048, parallel: 2, threads: 8, flashAttention: 'off' });
  });

  it('reports every bad variable in one ConfigError', () => {
    const error = configError({ PORT: 'abc', THREADS: '0', LOG_LEVEL: 'loud', FLASH_ATTENTION: 'yes' });
    expect(error.problems).toHaveLength(4);
    expect(error.message).toContain('FLASH_ATTENTION');
    expect(error.message).toContain('PORT');
    expect(error.message).toContain('"abc"');
    expect(error.message).toContain('THREADS');
    expect(error.message).toContain('LOG_LEVEL');
    expect(error.message).toContain('"loud"');
    expect(error.name).toBe('ConfigError');
  });

  it.each([
    ['PORT', '65536'],
    ['PORT', '80.5'],
    ['CONTEXT_SIZE', '63'],
    ['PARALLEL', '0'],
    ['REDIS_URL', 'http://localhost:6379'],
    ['REDIS_PREFIX', 'has space'],
    ['MODEL_ID', '-leading-dash'],
  ])('refuses %s=%s', (name, value) => {
    const error = configError({ [name]: value });
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toContain(name);
  });
});
