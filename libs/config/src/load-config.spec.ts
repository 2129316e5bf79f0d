import { describe, it, expect } from '@jest/globals';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { ConfigError } from './config-error.js';
import { hostName } from './host-name.js';
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

  it('reads the prompt cache mode: full unless told, exact, off, or a boolean for the default and off', () => {
    const mode = (value?: string) =>
      loadConfig(value === undefined ? {} : { PROMPT_CACHE: value }).deployments[0]!.promptCache;
    expect(mode()).toBe('full');
    expect([mode('full'), mode('off'), mode('exact')]).toEqual(['full', 'off', 'exact']);
    expect([mode('true'), mode('1'), mode('false'), mode('no')]).toEqual(['full', 'full', 'off', 'off']);
    expect(configError({ PROMPT_CACHE: 'sometimes' }).message).toContain(
      'PROMPT_CACHE must be one of full, exact, off',
    );
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

  it('caps images at 10 MiB, 8K UHD and 8 per request unless told, and never beyond what the body limit carries', () => {
    expect(loadConfig({}).api.images).toEqual({ maxBytes: 10 * 1024 * 1024, maxPixels: 7680 * 4320, maxCount: 8 });
    expect(loadConfig({ IMAGE_MAX_BYTES: '1000', IMAGE_MAX_PIXELS: '4096', IMAGE_MAX_COUNT: '0' }).api.images).toEqual({
      maxBytes: 1000,
      maxPixels: 4096,
      maxCount: 0,
    });
    // Base64 takes 4/3: a body of 4 MiB carries 3 MiB of image at most, which becomes the default there.
    expect(loadConfig({ BODY_LIMIT_BYTES: String(4 * 1024 * 1024) }).api.images.maxBytes).toBe(3 * 1024 * 1024);
    expect(
      loadConfig({ BODY_LIMIT_BYTES: String(64 * 1024 * 1024), IMAGE_MAX_BYTES: String(20 * 1024 * 1024) }).api.images
        .maxBytes,
    ).toBe(20 * 1024 * 1024);
  });

  it('refuses image caps the body limit could never let through, or out of range, naming both settings', () => {
    const error = configError({ IMAGE_MAX_BYTES: String(20 * 1024 * 1024) });
    expect(error.problems).toHaveLength(1);
    expect(error.message).toContain('IMAGE_MAX_BYTES (20971520) cannot arrive within BODY_LIMIT_BYTES (16777216)');
    expect(error.message).toContain('raise BODY_LIMIT_BYTES above 27962027');
    expect(error.message).toContain('lower IMAGE_MAX_BYTES to 12582912');
    const ranges = configError({ IMAGE_MAX_PIXELS: '0', IMAGE_MAX_COUNT: '-1', IMAGE_MAX_BYTES: 'big' });
    expect(ranges.problems.map((p) => p.split(' ')[0])).toEqual([
      'IMAGE_MAX_BYTES',
      'IMAGE_MAX_PIXELS',
      'IMAGE_MAX_COUNT',
    ]);
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

  it("answers to the loopback names and this machine's own name unless ALLOWED_HOSTS says otherwise", () => {
    const { allowedHosts, bodyTimeoutMs, uploadTimeoutMs } = loadConfig({}).api;
    const own = hostName(hostname());
    expect(allowedHosts).toEqual(expect.arrayContaining(['localhost', '127.0.0.1', '[::1]', ...(own ? [own] : [])]));
    expect(bodyTimeoutMs).toBe(30_000);
    expect(uploadTimeoutMs).toBe(600_000);
    expect(loadConfig({ ALLOWED_HOSTS: ' API.example.com:443, 10.0.0.5 ,::1,' }).api.allowedHosts).toEqual([
      'api.example.com',
      '10.0.0.5',
      '[::1]',
    ]);
    expect(loadConfig({ ALLOWED_HOSTS: '*' }).api.allowedHosts).toBe('*');
  });

  it('refuses an ALLOWED_HOSTS entry that is not a host name, with the other problems', () => {
    const error = configError({ ALLOWED_HOSTS: 'localhost,http://example.com', REQUEST_BODY_TIMEOUT_MS: '0' });
    expect(error.problems).toHaveLength(2);
    expect(error.message).toContain('ALLOWED_HOSTS');
    expect(error.message).toContain('"http://example.com"');
    expect(error.message).toContain('REQUEST_BODY_TIMEOUT_MS');
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

  it('runs the model in process unless told otherwise, and takes no images', () => {
    const config = loadConfig({});
    expect(config.deployments[0]).toMatchObject({ engine: { kind: 'llama-cpp' }, vision: false });
    expect(config.worker.llamaServerBin).toBeNull();
    expect(loadConfig({ LLAMA_SERVER_BIN: 'bin/llama-server' }).worker.llamaServerBin).toBe(
      resolve('bin/llama-server'),
    );
  });

  it('serves the vision preset with its generated projector on llama-server', () => {
    const config = loadConfig({ MODEL: 'vision', MODELS_DIR: '/srv/models' });
    expect(config.deployments[0]).toMatchObject({
      id: 'conveyor-tiny-vision',
      model: 'vision',
      engine: { kind: 'llama-server', mmproj: '/srv/models/conveyor-tiny-vision-mmproj.gguf', imageMaxTokens: null },
      vision: true,
    });
  });

  it('reads a projector and its image budget, which imply llama-server', () => {
    const config = loadConfig({ MODEL: '/m/llava.gguf', MMPROJ: 'hf:user/repo/mmproj.gguf', IMAGE_MAX_TOKENS: '256' });
    expect(config.deployments[0]).toMatchObject({
      engine: { kind: 'llama-server', mmproj: 'hf:user/repo/mmproj.gguf', imageMaxTokens: 256 },
      vision: true,
    });
    // Without a projector llama-server serves text only.
    expect(loadConfig({ ENGINE: 'llama-server' }).deployments[0]).toMatchObject({
      engine: { kind: 'llama-server', mmproj: null, imageMaxTokens: null },
      vision: false,
    });
  });

  it('reads an OpenAI-compatible upstream: its URL, key and model, and whether it takes images', () => {
    const config = loadConfig({
      UPSTREAM_URL: 'http://vllm:8000/v1/',
      UPSTREAM_API_KEY: 'k',
      UPSTREAM_MODEL: 'Qwen/Qwen2.5-VL-7B-Instruct',
      VISION: 'true',
    });
    expect(config.deployments[0]).toMatchObject({
      id: 'Qwen2.5-VL-7B-Instruct',
      model: 'Qwen/Qwen2.5-VL-7B-Instruct',
      engine: { kind: 'openai', url: 'http://vllm:8000/v1', apiKey: 'k', model: 'Qwen/Qwen2.5-VL-7B-Instruct' },
      vision: true,
    });
    // MODEL names the upstream's model too; no key is none.
    expect(
      loadConfig({ ENGINE: 'openai', UPSTREAM_URL: 'https://api.example.com/v1', MODEL: 'small' }).deployments[0],
    ).toMatchObject({
      id: 'small',
      engine: { kind: 'openai', url: 'https://api.example.com/v1', apiKey: null, model: null },
      vision: false,
    });
  });

  it.each([
    [{ ENGINE: 'vllm' }, 'ENGINE must be one of llama-cpp, llama-server, openai, simulated (got "vllm")'],
    [{ ENGINE: 'openai', MODEL: 'm' }, 'UPSTREAM_URL is required for engine openai'],
    [{ UPSTREAM_URL: 'ftp://x/v1', MODEL: 'm' }, 'UPSTREAM_URL must be an http:// or https:// URL (got "ftp://x/v1")'],
    [{ UPSTREAM_URL: 'http://x/v1' }, 'MODEL or UPSTREAM_MODEL must name the model the upstream serves'],
    [{ UPSTREAM_MODEL: 'm' }, 'UPSTREAM_MODEL is set but UPSTREAM_URL is not'],
    [{ MMPROJ: '/m/mmproj.gguf', ENGINE: 'llama-cpp' }, 'MMPROJ needs engine llama-server, but ENGINE is llama-cpp'],
    [{ MMPROJ: '/m/mmproj.bin' }, 'MMPROJ must be a .gguf path or an hf: URI (got "/m/mmproj.bin")'],
    [
      { MODEL: 'vision', ENGINE: 'llama-cpp' },
      'MODEL vision (a preset with a vision projector) needs engine llama-server',
    ],
    [{ VISION: 'true' }, 'VISION needs a vision projector'],
    [{ IMAGE_MAX_TOKENS: '64' }, 'IMAGE_MAX_TOKENS needs a vision projector'],
    [{ IMAGE_MAX_TOKENS: '0', MMPROJ: '/m/p.gguf' }, 'IMAGE_MAX_TOKENS must be an integer from 1 to 65536'],
    [{ ENGINE: 'llama-server', TASK: 'embeddings' }, 'TASK embeddings runs on engine llama-cpp only'],
    [
      { MMPROJ: '/m/p.gguf', UPSTREAM_URL: 'http://x/v1', MODEL: '/m/x.gguf' },
      'UPSTREAM_URL needs engine openai, which MMPROJ rules out',
    ],
  ])('refuses the engine settings %j in one problem', (env, problem) => {
    const error = configError(env as Record<string, string>);
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toContain(problem);
  });

  it('keeps files on local disk under DATA_DIR/files unless FILE_STORE names a bucket', () => {
    expect(loadConfig({}).fileStore).toEqual({ kind: 'local', dir: resolve('data', 'files') });
    expect(loadConfig({ DATA_DIR: '/var/conveyor' }).fileStore).toEqual({ kind: 'local', dir: '/var/conveyor/files' });
  });

  it('reads an s3:// FILE_STORE, with the endpoint, region and path style of the AWS variables', () => {
    expect(loadConfig({ FILE_STORE: 's3://my-bucket/conveyor/prod/', AWS_REGION: 'eu-west-1' }).fileStore).toEqual({
      kind: 's3',
      bucket: 'my-bucket',
      prefix: 'conveyor/prod',
      endpoint: null,
      region: 'eu-west-1',
      forcePathStyle: false,
    });
    // Another store: path-style and us-east-1 unless told otherwise.
    expect(
      loadConfig({ FILE_STORE: 's3://files', AWS_ENDPOINT_URL: 'http://minio:9000', AWS_DEFAULT_REGION: '' }).fileStore,
    ).toEqual({
      kind: 's3',
      bucket: 'files',
      prefix: '',
      endpoint: 'http://minio:9000',
      region: 'us-east-1',
      forcePathStyle: true,
    });
    expect(
      loadConfig({
        FILE_STORE: 's3://files/x',
        AWS_ENDPOINT_URL: 'http://ignored:1',
        AWS_ENDPOINT_URL_S3: 'https://account.r2.cloudflarestorage.com',
        AWS_DEFAULT_REGION: 'auto',
        S3_FORCE_PATH_STYLE: 'false',
      }).fileStore,
    ).toMatchObject({ endpoint: 'https://account.r2.cloudflarestorage.com', region: 'auto', forcePathStyle: false });
  });

  it.each([
    ['FILE_STORE', 'minio://bucket/x'],
    ['FILE_STORE', '/var/files'],
    ['FILE_STORE', 's3://'],
    ['FILE_STORE', 's3://Upper_Case/x'],
    ['FILE_STORE', 's3://bucket//x'],
    ['FILE_STORE', 's3://bucket/a/../b'],
    ['FILE_STORE', 's3://bucket/with space'],
    ['AWS_ENDPOINT_URL', 'minio:9000'],
    ['AWS_REGION', 'eu west'],
    ['S3_FORCE_PATH_STYLE', 'maybe'],
  ])('refuses %s=%s for a file store in S3', (name, value) => {
    const error = configError({ FILE_STORE: 's3://bucket/prefix', [name]: value });
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toContain(name);
    expect(error.problems[0]).toContain(`"${value}"`);
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
