import { hostname } from 'node:os';
import { basename, resolve } from 'node:path';
import { MODEL_PRESETS, isModelPresetName } from '@conveyor/gguf';
import { ConfigError } from './config-error.js';
import type {
  AllowedHosts,
  ApiKeyConfig,
  DeploymentConfig,
  FlashAttention,
  PlatformConfig,
  PromptCacheMode,
  SentinelAddress,
  SentinelConfig,
} from './config.types.js';
import { resolveEngine, type EngineContext, type EngineFieldNames } from './engine-config.js';
import { EnvReader } from './env/env-reader.js';
import { IMAGE_MAX_BYTES_DEFAULT } from './env/limits.vars.js';
import { hostName } from './host-name.js';
import { readFileStoreConfig } from './file-store-config.js';
import type { DeploymentDto } from './file/deployments-file.dto.js';
import { readDeploymentsFile } from './file/read-deployments-file.js';
import { hashKey } from './hash-key.js';

/** Deployment ids become queue names and model ids: keep them to characters both accept. */
const DEPLOYMENT_ID = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/;

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
  promptCharsPerToken: number;
  parallel: number;
  threads: number;
  flashAttention: FlashAttention;
  promptCache: PromptCacheMode;
}

/** Engine fields of the deployments file, by their path in it. */
const fileEngineFields = (i: number): EngineFieldNames => {
  const at = (field: string) => `deployments[${i}].${field}`;
  return {
    model: at('model'),
    task: at('task'),
    engine: at('engine'),
    mmproj: at('mmproj'),
    imageMaxTokens: at('imageMaxTokens'),
    vision: at('vision'),
    upstream: at('upstream'),
    upstreamUrl: at('upstream.url'),
    upstreamApiKey: at('upstream.apiKey'),
    upstreamApiKeyEnv: at('upstream.apiKeyEnv'),
    upstreamModel: at('upstream.model'),
  };
};

/** Engine fields of the one deployment the environment describes, by their variables. */
const ENV_ENGINE_FIELDS: EngineFieldNames = {
  model: 'MODEL',
  task: 'TASK',
  engine: 'ENGINE',
  mmproj: 'MMPROJ',
  imageMaxTokens: 'IMAGE_MAX_TOKENS',
  vision: 'VISION',
  upstream: 'UPSTREAM_URL',
  upstreamUrl: 'UPSTREAM_URL',
  upstreamApiKey: 'UPSTREAM_API_KEY',
  upstreamApiKeyEnv: 'UPSTREAM_API_KEY',
  upstreamModel: 'UPSTREAM_MODEL',
};

function fromFile(
  d: DeploymentDto,
  i: number,
  defaults: DeploymentDefaults,
  context: EngineContext,
  problems: string[],
): DeploymentConfig {
  const task = d.task ?? 'generate';
  const served = resolveEngine(
    {
      model: d.model,
      task,
      engine: d.engine,
      mmproj: d.mmproj,
      imageMaxTokens: d.imageMaxTokens,
      vision: d.vision,
      upstream: d.upstream,
    },
    fileEngineFields(i),
    context,
    problems,
  );
  return {
    id: d.id,
    model: served.model,
    pool: d.pool ?? 'cpu',
    contextSize: d.contextSize ?? defaults.contextSize,
    promptCharsPerToken: d.promptCharsPerToken ?? defaults.promptCharsPerToken,
    parallel: d.parallel ?? defaults.parallel,
    threads: d.threads ?? defaults.threads,
    flashAttention: d.flashAttention ?? defaults.flashAttention,
    promptCache: d.promptCache === undefined ? defaults.promptCache : promptCacheMode(d.promptCache),
    defaults: d.defaults?.toPreset() ?? {},
    alias: d.alias ? { org: d.alias.org, app: d.alias.app } : undefined,
    auth: d.auth ?? 'private',
    task,
    engine: served.engine,
    vision: served.vision,
    reasoningParser: d.reasoningParser ?? null,
  };
}

/** How a problem names a deployment's field: by its path in the file, or by its environment variable. */
type FieldName = (index: number, field: 'id' | 'model' | 'alias' | 'auth') => string;
const fileField: FieldName = (i, field) => `deployments[${i}].${field}`;
const envField: FieldName = (_i, field) => (field === 'model' ? 'MODEL' : field === 'id' ? 'MODEL_ID' : field);

function checkDeployments(
  deployments: DeploymentConfig[],
  keys: ApiKeyConfig[],
  problems: string[],
  name: FieldName,
): void {
  const ids = new Set<string>();
  const aliases = new Set<string>();
  for (const [i, d] of deployments.entries()) {
    if (ids.has(d.id)) problems.push(`${name(i, 'id')} "${d.id}" is used twice`);
    ids.add(d.id);
    // An upstream's model is whatever name it serves it under.
    if (d.engine.kind !== 'openai' && !isModelSource(d.model)) {
      problems.push(
        `${name(i, 'model')} must be a preset (${Object.keys(MODEL_PRESETS).join(', ')}), a .gguf path or an hf: URI (got "${d.model}")`,
      );
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

/**
 * ALLOWED_HOSTS: comma-separated host names, or `*`. Unset: the loopback names and this machine's
 * own name, which is what a local server is addressed by; anything else must be named.
 */
function allowedHosts(r: EnvReader): AllowedHosts {
  const raw = r.optionalString('ALLOWED_HOSTS');
  if (!raw) {
    const own = hostName(hostname());
    return [...new Set(['localhost', '127.0.0.1', '[::1]', ...(own ? [own] : [])])];
  }
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.includes('*')) return '*';
  const names: string[] = [];
  for (const entry of entries) {
    const name = hostName(entry);
    if (name) names.push(name);
    else
      r.problems.push(
        `ALLOWED_HOSTS entries are host names like api.example.com, 10.0.0.5 or [::1], or * (got "${entry}")`,
      );
  }
  return names;
}

/** A prompt cache setting: its mode, or a boolean (on is the default mode, `exact`). */
function promptCacheMode(value: PromptCacheMode | boolean | string): PromptCacheMode {
  if (value === 'exact' || value === 'off' || value === 'full') return value;
  return value === false || value === 'false' || value === '0' || value === 'no' ? 'off' : 'exact';
}

/** `host:port`, or `[v6 address]:port`. */
const SENTINEL_ADDRESS = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/;

/** REDIS_SENTINELS: `host:port` entries, comma-separated; each bad entry is a problem of its own. */
function readSentinels(raw: string, problems: string[]): SentinelAddress[] {
  const sentinels: SentinelAddress[] = [];
  for (const entry of raw.split(',').map((e) => e.trim())) {
    const match = SENTINEL_ADDRESS.exec(entry);
    const port = Number(match?.[3]);
    if (!match || port < 1 || port > 65535) {
      problems.push(`REDIS_SENTINELS entries must be host:port with a port from 1 to 65535 (got "${entry}")`);
      continue;
    }
    sentinels.push({ host: match[1] ?? match[2], port });
  }
  return sentinels;
}

/**
 * Where Redis is: REDIS_URL names a single Redis; REDIS_SENTINELS and REDIS_SENTINEL_NAME make the
 * sentinels name the primary instead, and REDIS_URL then only contributes the data nodes' password,
 * database and scheme. REDIS_PASSWORD keeps the password out of the URL (it must not be in both).
 */
function readRedisLocation(r: EnvReader): { url: string; sentinel: SentinelConfig | null } {
  let url = r.string('REDIS_URL');
  r.check(/^rediss?:\/\//.test(url), `REDIS_URL must start with redis:// or rediss:// (got "${url}")`);
  const password = r.optionalString('REDIS_PASSWORD');
  if (password && /^rediss?:\/\//.test(url)) {
    try {
      const parsed = new URL(url);
      if (parsed.password) r.problems.push('REDIS_PASSWORD and a password in REDIS_URL are exclusive: set one');
      parsed.password = password;
      url = parsed.toString();
    } catch {
      r.problems.push('REDIS_URL is not a valid URL');
    }
  }

  const list = r.optionalString('REDIS_SENTINELS');
  const name = r.optionalString('REDIS_SENTINEL_NAME');
  const sentinelPassword = r.optionalString('REDIS_SENTINEL_PASSWORD');
  if (!list) {
    r.check(!name, 'REDIS_SENTINEL_NAME is set but REDIS_SENTINELS is not: name the sentinels too');
    r.check(!sentinelPassword, 'REDIS_SENTINEL_PASSWORD is set but REDIS_SENTINELS is not: name the sentinels too');
    return { url, sentinel: null };
  }
  r.check(!!name, "REDIS_SENTINELS needs REDIS_SENTINEL_NAME, the primary's name as the sentinels know it");
  r.check(
    !name || /^[A-Za-z0-9_.-]+$/.test(name),
    `REDIS_SENTINEL_NAME must be letters, digits, '.', '_' or '-' (got "${name}")`,
  );
  return {
    url,
    sentinel: { sentinels: readSentinels(list, r.problems), name: name ?? '', password: sentinelPassword ?? null },
  };
}

/** Base64 takes 4 characters for every 3 bytes: the most image bytes a body of `bodyBytes` can carry. */
const imageBytesWithin = (bodyBytes: number): number => Math.floor((bodyBytes * 3) / 4);

/**
 * The caps on a request's images. An image arrives as base64 inside the JSON body, so its bytes can be
 * no more than 3/4 of BODY_LIMIT_BYTES: the default (10 MiB, whose base64 is 13.3 MiB) fits the
 * default body of 16 MiB with room for the rest of a conversation, and shrinks with a smaller body
 * limit. An IMAGE_MAX_BYTES set beyond what the body limit lets through is refused, naming both.
 * 7680×4320 (8K UHD, 33.2 Mpx) is the largest frame cameras and screens commonly make, and decodes to
 * 133 MB of RGBA in a worker; a few kilobytes of PNG can claim far more, so the header decides.
 */
function readImageLimits(r: EnvReader, bodyLimitBytes: number): PlatformConfig['api']['images'] {
  const within = imageBytesWithin(bodyLimitBytes);
  const maxBytes = r.int('IMAGE_MAX_BYTES', Math.min(IMAGE_MAX_BYTES_DEFAULT, within));
  r.check(
    maxBytes <= within,
    `IMAGE_MAX_BYTES (${maxBytes}) cannot arrive within BODY_LIMIT_BYTES (${bodyLimitBytes}): base64 takes 4/3 as much; ` +
      `raise BODY_LIMIT_BYTES above ${Math.ceil((maxBytes * 4) / 3)} (the image's base64 and the rest of the body), or lower IMAGE_MAX_BYTES to ${within}`,
  );
  return {
    maxBytes,
    maxPixels: r.int('IMAGE_MAX_PIXELS'),
    maxCount: r.int('IMAGE_MAX_COUNT'),
  };
}

/** Validates the environment (and the deployments file it names) once; throws one ConfigError. */
export function loadConfig(env: Record<string, string | undefined> = process.env): PlatformConfig {
  const r = new EnvReader(env);
  const redisLocation = readRedisLocation(r);
  const prefix = r.string('REDIS_PREFIX');
  r.check(/^[A-Za-z0-9_.-]+$/.test(prefix), `REDIS_PREFIX must be letters, digits, '.', '_' or '-' (got "${prefix}")`);

  const defaults: DeploymentDefaults = {
    contextSize: r.int('CONTEXT_SIZE'),
    promptCharsPerToken: r.int('PROMPT_CHARS_PER_TOKEN'),
    parallel: r.int('PARALLEL'),
    threads: r.int('THREADS'),
    flashAttention: r.oneOf('FLASH_ATTENTION'),
    promptCache: promptCacheMode(r.oneOf('PROMPT_CACHE')),
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
  r.check(
    !adminDigest || /^[0-9a-f]{64}$/.test(adminDigest),
    'ADMIN_KEY_SHA256 must be 64 hex digits (npm run hash-key -- <key>)',
  );

  const modelsDir = resolve(r.string('MODELS_DIR'));
  const engineContext: EngineContext = { named: (name) => r.named(name), modelsDir };
  let deployments: DeploymentConfig[] = [];
  const file = r.optionalString('CONVEYOR_CONFIG');
  if (file) {
    if (r.optionalString('MODEL'))
      r.problems.push('MODEL and CONVEYOR_CONFIG are exclusive: declare the model in the file');
    const read = readDeploymentsFile(resolve(file));
    if (read.ok) {
      deployments = read.value.deployments.map((d, i) => fromFile(d, i, defaults, engineContext, r.problems));
      apiKeys.push(
        ...(read.value.apiKeys ?? []).map((k) => ({
          name: k.name,
          sha256: k.sha256.toLowerCase(),
          rateLimit: k.rateLimit,
        })),
      );
    } else {
      r.problems.push(read.problem);
    }
  } else {
    const task = r.oneOf('TASK');
    const upstreamUrl = r.optionalString('UPSTREAM_URL');
    const served = resolveEngine(
      {
        model: r.optionalString('MODEL'),
        task,
        engine: r.optionalString('ENGINE') === undefined ? undefined : r.oneOf('ENGINE'),
        mmproj: r.optionalString('MMPROJ'),
        imageMaxTokens: r.optionalString('IMAGE_MAX_TOKENS') === undefined ? undefined : r.int('IMAGE_MAX_TOKENS', 0),
        vision: r.optionalString('VISION') === undefined ? undefined : r.bool('VISION'),
        upstream:
          upstreamUrl === undefined
            ? undefined
            : {
                url: upstreamUrl,
                apiKey: r.optionalString('UPSTREAM_API_KEY'),
                model: r.optionalString('UPSTREAM_MODEL'),
              },
      },
      ENV_ENGINE_FIELDS,
      engineContext,
      r.problems,
    );
    if (!upstreamUrl) {
      for (const name of ['UPSTREAM_API_KEY', 'UPSTREAM_MODEL'] as const)
        r.check(!r.optionalString(name), `${name} is set but UPSTREAM_URL is not: name the upstream too`);
    }
    const id = r.optionalString('MODEL_ID') ?? deriveDeploymentId(served.model);
    // No model at all is its own problem, already reported; an id derived from nothing is not another.
    if (served.model || r.optionalString('MODEL_ID'))
      r.check(DEPLOYMENT_ID.test(id), `MODEL_ID must be 1-128 letters, digits, '.', '_', '-' or '/' (got "${id}")`);
    deployments = [
      {
        id,
        model: served.model,
        pool: r.oneOf('POOL'),
        ...defaults,
        defaults: {},
        auth: 'private',
        task,
        engine: served.engine,
        vision: served.vision,
        reasoningParser: r.oneOf('REASONING_PARSER') === 'think' ? 'think' : null,
      },
    ];
  }
  checkDeployments(deployments, apiKeys, r.problems, file ? fileField : envField);

  const dataDir = resolve(r.string('DATA_DIR'));
  const llamaServerBin = r.optionalString('LLAMA_SERVER_BIN');
  const bodyLimitBytes = r.int('BODY_LIMIT_BYTES');
  const config: PlatformConfig = {
    redis: {
      ...redisLocation,
      prefix,
      replyTtlMs: r.int('REPLY_TTL_MS'),
      jobRetentionSeconds: r.int('JOB_RETENTION_SECONDS'),
    },
    api: {
      host: r.string('HOST'),
      port: r.int('PORT'),
      bodyLimitBytes,
      requestTimeoutMs: r.int('REQUEST_TIMEOUT_MS'),
      queueTimeoutMs: r.int('QUEUE_TIMEOUT_MS'),
      maxQueueDepth: r.int('MAX_QUEUE_DEPTH'),
      shutdownGraceMs: r.int('API_SHUTDOWN_GRACE_MS'),
      allowedHosts: allowedHosts(r),
      bodyTimeoutMs: r.int('REQUEST_BODY_TIMEOUT_MS'),
      uploadTimeoutMs: r.int('UPLOAD_TIMEOUT_MS'),
      images: readImageLimits(r, bodyLimitBytes),
    },
    worker: {
      heartbeatMs: r.int('HEARTBEAT_MS'),
      lockMs: r.int('WORKER_LOCK_MS'),
      stalledIntervalMs: r.int('WORKER_STALLED_INTERVAL_MS'),
      maxStalls: r.int('WORKER_MAX_STALLS'),
      shutdownGraceMs: r.int('WORKER_SHUTDOWN_GRACE_MS'),
      allowCpuFallback: r.bool('ALLOW_CPU_FALLBACK'),
      llamaServerBin: llamaServerBin ? resolve(llamaServerBin) : null,
    },
    batch: {
      dataDir,
      maxLines: r.int('BATCH_MAX_LINES'),
      maxFileBytes: r.int('BATCH_MAX_FILE_BYTES'),
      inflightPerBatch: r.int('BATCH_INFLIGHT'),
      tickMs: r.int('BATCH_TICK_MS'),
      leaseMs: r.int('BATCH_LEASE_MS'),
    },
    fileStore: readFileStoreConfig(r, dataDir),
    modelsDir,
    logLevel: r.oneOf('LOG_LEVEL'),
    logFormat: r.oneOf('LOG_FORMAT'),
    logPrompts: r.bool('LOG_PROMPTS'),
    deployments,
    apiKeys,
    adminKeySha256: adminKey ? hashKey(adminKey) : (adminDigest ?? null),
  };
  if (r.problems.length) throw new ConfigError(r.problems);
  return config;
}
