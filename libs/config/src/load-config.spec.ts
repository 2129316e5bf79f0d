import { describe, it, expect } from '@jest/globals';
import { resolve } from 'node:path';
import { ConfigError } from './config-error.js';
import { deriveDeploymentId, loadConfig } from './load-config.js';

/** The ConfigError a bad environment must raise; fails the test when none is thrown. */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

describe('loadConfig', () => {
  it('has working defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config.api.port).toBe(8000);
    expect(config.api.host).toBe('0.0.0.0');
    expect(config.redis).toEqual({ url: 'redis://127.0.0.1:6379', prefix: 'conveyor', replyTtlMs: 600_000, jobRetentionSeconds: 3600 });
    expect(config.logLevel).toBe('log');
    expect(config.modelsDir).toBe(resolve('models'));
    expect(config.deployments).toHaveLength(1);
    expect(config.deployments[0]).toMatchObject({ id: 'conveyor-tiny', model: 'tiny', contextSize: 4096, threads: 1, flashAttention: 'auto' });
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
    expect(config.redis).toEqual({ url: 'rediss://cache:6380', prefix: 'test_1', replyTtlMs: 600_000, jobRetentionSeconds: 3600 });
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

  it('keeps only the digest of the admin key, and serves no dashboard without one', () => {
    expect(loadConfig({}).adminKeySha256).toBeNull();
    const digest = '2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b';
    expect(loadConfig({ ADMIN_KEY: 'secret' }).adminKeySha256).toBe(digest);
    expect(loadConfig({ ADMIN_KEY_SHA256: digest.toUpperCase() }).adminKeySha256).toBe(digest);
  });

  it('refuses a malformed admin key digest, or both forms at once', () => {
    expect(configError({ ADMIN_KEY_SHA256: 'abc' }).message).toContain('ADMIN_KEY_SHA256 must be 64 hex digits');
    expect(configError({ ADMIN_KEY: 'a', ADMIN_KEY_SHA256: '0'.repeat(64) }).message).toContain('exclusive');
  });

  it('lets MODEL_ID override the derived id', () => {
    const config = loadConfig({ MODEL: '/models/Model-Q8_0.gguf', MODEL_ID: 'my-org/chat' });
    expect(config.deployments[0]).toMatchObject({ id: 'my-org/chat', model: '/models/Model-Q8_0.gguf' });
  });

  it('derives the id from a GGUF path or an hf: URI', () => {
    expect(loadConfig({ MODEL: '/x/y/Model-Q8_0.gguf' }).deployments[0].id).toBe('Model-Q8_0');
    expect(loadConfig({ MODEL: 'hf:user/repo:Q4_K_M' }).deployments[0].id).toBe('repo');
  });

  it('refuses a MODEL that is neither a preset, a .gguf path nor an hf: URI', () => {
    const error = configError({ MODEL: 'gpt-4' });
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(/^MODEL /);
    expect(error.problems[0]).toContain('"gpt-4"');
  });
});

describe('deriveDeploymentId', () => {
  it('names a preset by its model name', () => {
    expect(deriveDeploymentId('tiny')).toBe('conveyor-tiny');
    expect(deriveDeploymentId('bench')).toBe('conveyor-bench');
  });

  it('uses the file name of a GGUF path without its extension', () => {
    expect(deriveDeploymentId('/x/y/Model-Q8_0.gguf')).toBe('Model-Q8_0');
    expect(deriveDeploymentId('models/Other.GGUF')).toBe('Other');
  });

  it('uses the repository of an hf: URI with a quantization tag', () => {
    expect(deriveDeploymentId('hf:user/repo:Q4_K_M')).toBe('repo');
  });

  it('uses the file name of an hf: URI that names a file', () => {
    expect(deriveDeploymentId('hf:user/repo/file.gguf')).toBe('file');
  });
});
