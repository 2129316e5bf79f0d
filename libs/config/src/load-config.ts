import { basename, resolve } from 'node:path';
import { MODEL_PRESETS, isModelPresetName } from '@conveyor/gguf';
import { ConfigError } from './config-error.js';
import type { ApiKeyConfig, DeploymentConfig, FlashAttention, LogLevel, PlatformConfig } from './config.types.js';
import { EnvReader } from './env-reader.js';
import type { DeploymentDto } from './file/deployments-file.dto.js';
import { readDeploymentsFile } from './file/read-deployments-file.js';
import { hashKey } from './hash-key.js';

const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'log', 'debug', 'verbose'];
/** Deployment ids become queue names and model ids: keep them to characters both accept. */
const DEPLOYMENT_ID = /^[A-Za-z0-9][A-Za-z0-9._\/-]{0,127}$/;

/** The id clients send as `model`, derived from what is served unless MODEL_ID says otherwise. */
export function deriveDeploymentId(model: string): string {
  if (isModelPresetName(model)) return MODEL_PRESETS[model].name;
  const last = model.replace(/^hf:/, '').split('/').pop() ?? model;
  return last.replace(/:.*$/, '').replace(/\.gguf$/i, '');
}

const isModelSource = (model: string): boolean =>
  isModelPresetName(model) || model.startsWith('hf:') || basename(model).toLowerCase().endsWith('.gguf');

interface DeploymentDefaults {
  contextSize: number;
  parallel: number;
  threads: number;
  flashAttention: FlashAttention;
}

function fromFile(d: DeploymentDto, defaults: DeploymentDefaults): DeploymentConfig {
  return {
    id: d.id,
    model: d.model,
    pool: d.pool ?? 'cpu',
    contextSize: d.contextSize ?? defaults.contextSize,
    parallel: d.parallel ?? defaults.parallel,
    threads: d.threads ?? defaults.threads,
    flashAttention: d.flashAttention ?? defaults.flashAttention,
    defaults: { ...(d.defaults ?? {}) },
    alias: d.alias ? { org: d.alias.org, app: d.alias.app } : undefined,
    auth: d.auth ?? 'private',
    task: d.task ?? 'generate',
    reasoningParser: d.reasoningParser ?? null,
  };
}

/** How a problem names a deployment's field: by its path in the file, or by its environment variable. */
type FieldName = (index: number, field: 'id' | 'model' | 'alias' | 'auth') => string;
const fileField: FieldName = (i, field) => `deployments[${i}].${field}`;
const envField: FieldName = (_i, field) => (field === 'model' ? 'MODEL' : field === 'id' ? 'MODEL_ID' : field);

function checkDeployments(deployments: DeploymentConfig[], keys: ApiKeyConfig[], problems: string[], name: FieldName): void {
  const ids = new Set<string>();
  const aliases = new Set<string>();
  for (const [i, d] of deployments.entries()) {
    if (ids.has(d.id)) problems.push(`${name(i, 'id')} "${d.id}" is used twice`);
    ids.add(d.id);
    if (!isModelSource(d.model)) {
      problems.push(`${name(i, 'model')} must be a preset (${Object.keys(MODEL_PRESETS).join(', ')}), a .gguf path or an hf: URI (got "${d.model}")`);
    }
    if (d.alias) {
      const path = `${d.alias.org}/${d.alias.app}`;
      if (aliases.has(path)) problems.push(`${name(i, 'alias')} ${path} is used twice`);
      aliases.add(path);
      if (d.auth === 'private' && keys.length === 0) {
        problems.push(`${name(i, 'auth')} is private but no API key is configured (apiKeys in the file, or API_KEYS)`);
      }
    }
  }
}

/** Validates the environment (and the deployments file it names) once; throws one ConfigError. */
export function loadConfig(env: Record<string, string | undefined> = process.env): PlatformConfig {
  const r = new EnvReader(env);
  const redisUrl = r.string('REDIS_URL', 'redis://127.0.0.1:6379');
  r.check(/^rediss?:\/\//.test(redisUrl), `REDIS_URL must start with redis:// or rediss:// (got "${redisUrl}")`);
  const prefix = r.string('REDIS_PREFIX', 'conveyor');
  r.check(/^[A-Za-z0-9_.-]+$/.test(prefix), `REDIS_PREFIX must be letters, digits, '.', '_' or '-' (got "${prefix}")`);

  const defaults: DeploymentDefaults = {
    contextSize: r.int('CONTEXT_SIZE', 4096, 64, 1 << 20),
    parallel: r.int('PARALLEL', 4, 1, 256),
    threads: r.int('THREADS', 1, 1, 1024),
    flashAttention: r.oneOf('FLASH_ATTENTION', 'auto', ['auto', 'on', 'off'] as const),
  };

  // Keys from the environment are plain text; only their hashes are kept.
  const apiKeys: ApiKeyConfig[] = (r.optionalString('API_KEYS') ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .map((key, i) => ({ name: `env-${i + 1}`, sha256: hashKey(key) }));

  const adminKey = r.optionalString('ADMIN_KEY');
  const adminDigest = r.optionalString('ADMIN_KEY_SHA256')?.toLowerCase();
  r.check(!(adminKey && adminDigest), 'ADMIN_KEY and ADMIN_KEY_SHA256 are exclusive: set one');
  r.check(!adminDigest || /^[0-9a-f]{64}$/.test(adminDigest), 'ADMIN_KEY_SHA256 must be 64 hex digits (npm run hash-key -- <key>)');

  let deployments: DeploymentConfig[] = [];
  const file = r.optionalString('CONVEYOR_CONFIG');
  if (file) {
    if (r.optionalString('MODEL')) r.problems.push('MODEL and CONVEYOR_CONFIG are exclusive: declare the model in the file');
    const read = readDeploymentsFile(resolve(file));
    if (read.ok) {
      deployments = read.value.deployments.map((d) => fromFile(d, defaults));
      apiKeys.push(...(read.value.apiKeys ?? []).map((k) => ({ name: k.name, sha256: k.sha256.toLowerCase(), rateLimit: k.rateLimit })));
    } else {
      r.problems.push(read.problem);
    }
  } else {
    const model = r.string('MODEL', 'tiny');
    const id = r.optionalString('MODEL_ID') ?? deriveDeploymentId(model);
    r.check(DEPLOYMENT_ID.test(id), `MODEL_ID must be 1-128 letters, digits, '.', '_', '-' or '/' (got "${id}")`);
    deployments = [
      {
        id,
        model,
        pool: r.oneOf('POOL', 'cpu', ['cpu', 'gpu'] as const),
        ...defaults,
        defaults: {},
        auth: 'private',
        task: r.oneOf('TASK', 'generate', ['generate', 'embeddings'] as const),
        reasoningParser: r.oneOf('REASONING_PARSER', 'none', ['none', 'think'] as const) === 'think' ? 'think' : null,
      },
    ];
  }
  checkDeployments(deployments, apiKeys, r.problems, file ? fileField : envField);

  const config: PlatformConfig = {
    redis: {
      url: redisUrl,
      prefix,
      replyTtlMs: r.int('REPLY_TTL_MS', 10 * 60 * 1000, 1000, 24 * 60 * 60 * 1000),
      jobRetentionSeconds: r.int('JOB_RETENTION_SECONDS', 3600, 1, 30 * 24 * 3600),
    },
    api: {
      host: r.string('HOST', '0.0.0.0'),
      port: r.int('PORT', 8000, 0, 65535),
      bodyLimitBytes: r.int('BODY_LIMIT_BYTES', 16 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      requestTimeoutMs: r.int('REQUEST_TIMEOUT_MS', 10 * 60 * 1000, 100, 24 * 60 * 60 * 1000),
      queueTimeoutMs: r.int('QUEUE_TIMEOUT_MS', 5 * 60 * 1000, 100, 24 * 60 * 60 * 1000),
      maxQueueDepth: r.int('MAX_QUEUE_DEPTH', 1000, 1, 10_000_000),
      shutdownGraceMs: r.int('API_SHUTDOWN_GRACE_MS', 10_000, 0, 60 * 60_000),
    },
    worker: {
      heartbeatMs: r.int('HEARTBEAT_MS', 2000, 100, 60_000),
      lockMs: r.int('WORKER_LOCK_MS', 30_000, 500, 10 * 60_000),
      stalledIntervalMs: r.int('WORKER_STALLED_INTERVAL_MS', 30_000, 250, 10 * 60_000),
      maxStalls: r.int('WORKER_MAX_STALLS', 1, 0, 100),
      shutdownGraceMs: r.int('WORKER_SHUTDOWN_GRACE_MS', 30_000, 0, 60 * 60_000),
      allowCpuFallback: r.bool('ALLOW_CPU_FALLBACK', false),
    },
    batch: {
      dataDir: resolve(r.string('DATA_DIR', 'data')),
      maxLines: r.int('BATCH_MAX_LINES', 50_000, 1, 10_000_000),
      maxFileBytes: r.int('BATCH_MAX_FILE_BYTES', 200 * 1024 * 1024, 1024, 10 * 1024 * 1024 * 1024),
      inflightPerBatch: r.int('BATCH_INFLIGHT', 16, 1, 10_000),
      tickMs: r.int('BATCH_TICK_MS', 100, 10, 60_000),
    },
    modelsDir: resolve(r.string('MODELS_DIR', 'models')),
    logLevel: r.oneOf('LOG_LEVEL', 'log', LOG_LEVELS),
    logFormat: r.oneOf('LOG_FORMAT', 'json', ['json', 'text'] as const),
    logPrompts: r.bool('LOG_PROMPTS', false),
    deployments,
    apiKeys,
    adminKeySha256: adminKey ? hashKey(adminKey) : (adminDigest ?? null),
  };
  if (r.problems.length) throw new ConfigError(r.problems);
  return config;
}
