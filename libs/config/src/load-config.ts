import { basename, resolve } from 'node:path';
import { MODEL_PRESETS, isModelPresetName } from '@conveyor/gguf';
import { ConfigError } from './config-error.js';
import type { LogLevel, PlatformConfig } from './config.types.js';
import { EnvReader } from './env-reader.js';

const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'log', 'debug', 'verbose'];
/** Deployment ids become queue names and model ids: keep them to characters both accept. */
const DEPLOYMENT_ID = /^[A-Za-z0-9][A-Za-z0-9._\/-]{0,127}$/;

/** The id clients send as `model`, derived from what is served unless MODEL_ID says otherwise. */
export function deriveDeploymentId(model: string): string {
  if (isModelPresetName(model)) return MODEL_PRESETS[model].name;
  const last = model.replace(/^hf:/, '').split('/').pop() ?? model;
  return last.replace(/:.*$/, '').replace(/\.gguf$/i, '');
}

/** Validates the whole environment once; throws one ConfigError listing every problem. */
export function loadConfig(env: Record<string, string | undefined> = process.env): PlatformConfig {
  const r = new EnvReader(env);
  const model = r.string('MODEL', 'tiny');
  const id = r.optionalString('MODEL_ID') ?? deriveDeploymentId(model);
  r.check(DEPLOYMENT_ID.test(id), `MODEL_ID must be 1-128 letters, digits, '.', '_', '-' or '/' (got "${id}")`);

  const redisUrl = r.string('REDIS_URL', 'redis://127.0.0.1:6379');
  r.check(/^rediss?:\/\//.test(redisUrl), `REDIS_URL must start with redis:// or rediss:// (got "${redisUrl}")`);
  const prefix = r.string('REDIS_PREFIX', 'conveyor');
  r.check(/^[A-Za-z0-9_.-]+$/.test(prefix), `REDIS_PREFIX must be letters, digits, '.', '_' or '-' (got "${prefix}")`);

  const config: PlatformConfig = {
    redis: { url: redisUrl, prefix },
    api: {
      host: r.string('HOST', '0.0.0.0'),
      port: r.int('PORT', 8000, 0, 65535),
      bodyLimitBytes: r.int('BODY_LIMIT_BYTES', 16 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      requestTimeoutMs: r.int('REQUEST_TIMEOUT_MS', 10 * 60 * 1000, 100, 24 * 60 * 60 * 1000),
    },
    modelsDir: resolve(r.string('MODELS_DIR', 'models')),
    logLevel: r.oneOf('LOG_LEVEL', 'log', LOG_LEVELS),
    deployments: [
      {
        id,
        model,
        contextSize: r.int('CONTEXT_SIZE', 4096, 64, 1 << 20),
        parallel: r.int('PARALLEL', 4, 1, 256),
        threads: r.int('THREADS', 1, 1, 1024),
      },
    ],
  };
  if (!isModelPresetName(model) && !model.startsWith('hf:') && !basename(model).toLowerCase().endsWith('.gguf')) {
    r.problems.push(`MODEL must be a preset (${Object.keys(MODEL_PRESETS).join(', ')}), a .gguf path or an hf: URI (got "${model}")`);
  }
  if (r.problems.length) throw new ConfigError(r.problems);
  return config;
}
