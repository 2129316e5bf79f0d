import { resolve } from 'node:path';
import { readAccessKeys } from './access-config.js';
import { readApiConfig } from './api-config.js';
import { readBatchConfig } from './batch-config.js';
import { ConfigError } from './config-error.js';
import type { PlatformConfig } from './config.types.js';
import { readDeploymentDefaults } from './deployments/deployment-defaults.js';
import { readDeployments } from './deployments/read-deployments.js';
import { EnvReader } from './env/env-reader.js';
import { readFileStoreConfig } from './file-store-config.js';
import { readRedisConfig } from './redis-config.js';
import { readTracingConfig } from './tracing-config.js';
import { readWorkerConfig } from './worker-config.js';

export { deriveDeploymentId } from './deployments/deployment-id.js';

/**
 * Validates the environment (and the deployments file it names) once; throws one ConfigError listing
 * every problem. Each variable's default, range and meaning are declared in ./env.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): PlatformConfig {
  const r = new EnvReader(env);
  const redis = readRedisConfig(r);
  const defaults = readDeploymentDefaults(r);
  const access = readAccessKeys(r);
  const { deployments, apiKeys, modelsDir, modelNames } = readDeployments(r, defaults, access.apiKeys);
  const dataDir = resolve(r.string('DATA_DIR'));
  const config: PlatformConfig = {
    redis,
    api: readApiConfig(r),
    worker: readWorkerConfig(r),
    batch: readBatchConfig(r, dataDir),
    fileStore: readFileStoreConfig(r, dataDir),
    modelsDir,
    logLevel: r.oneOf('LOG_LEVEL'),
    logFormat: r.oneOf('LOG_FORMAT'),
    logPrompts: r.bool('LOG_PROMPTS'),
    tracing: readTracingConfig(r),
    deployments,
    modelNames,
    apiKeys,
    adminKeySha256: access.adminKeySha256,
  };
  if (r.problems.length) throw new ConfigError(r.problems);
  return config;
}
