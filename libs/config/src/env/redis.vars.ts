import type { EnvVarSpec } from './env-var.js';

export const REDIS_VARS = {
  REDIS_URL: {
    kind: 'text',
    default: 'redis://127.0.0.1:6379',
    allowedText: 'a `redis://` or `rediss://` (TLS) URL',
    meaning:
      'The Redis the API and every worker share (the tests and benches use it too). With `REDIS_SENTINELS`, only its password, database and scheme are used; with `REDIS_CLUSTER_NODES`, only its password and scheme.',
  },
  REDIS_PASSWORD: {
    kind: 'text',
    defaultText: 'none',
    allowedText: 'a password',
    meaning: "The data nodes' password, kept out of the URL; refused next to a password in `REDIS_URL`.",
  },
  REDIS_SENTINELS: {
    kind: 'text',
    defaultText: 'none',
    allowedText: 'comma-separated `host:port` (`[v6 address]:port`) entries',
    meaning: 'Find the primary through these sentinels, and follow its failovers.',
  },
  REDIS_SENTINEL_NAME: {
    kind: 'text',
    defaultText: 'none',
    allowedText: 'letters, digits, `.`, `_` or `-`',
    meaning:
      "The primary's name as the sentinels know it (`sentinel monitor <name> …`); required with `REDIS_SENTINELS`.",
  },
  REDIS_SENTINEL_PASSWORD: {
    kind: 'text',
    defaultText: 'none',
    allowedText: 'a password',
    meaning: "The sentinels' own password, when they have one.",
  },
  REDIS_CLUSTER_NODES: {
    kind: 'text',
    defaultText: 'none',
    allowedText: 'comma-separated `host:port` (`[v6 address]:port`) entries',
    meaning:
      'Use a Redis Cluster: these nodes are the seeds the clients learn the cluster from (any few of its nodes). Refused next to `REDIS_SENTINELS`; `REDIS_URL` then only contributes its password and scheme.',
  },
  REDIS_PREFIX: {
    kind: 'text',
    default: 'conveyor',
    allowedText: 'letters, digits, `.`, `_` or `-`',
    meaning:
      "The prefix of the platform's keys in Redis (queues, reply streams, batches); platforms sharing one Redis need different ones.",
  },
  REPLY_TTL_MS: {
    kind: 'int',
    default: 10 * 60 * 1000,
    min: 1000,
    max: 24 * 60 * 60 * 1000,
    meaning: 'How long a reply stream outlives its last event: the window in which a client can resume it.',
  },
  RESPONSE_TTL_MS: {
    kind: 'int',
    default: 24 * 60 * 60 * 1000,
    min: 1000,
    max: 30 * 24 * 60 * 60 * 1000,
    meaning:
      'How long a stored response of the Responses API (`store`, the default) is kept after its last change: the window in which it can be retrieved and continued with `previous_response_id`.',
  },
  JOB_RETENTION_SECONDS: {
    kind: 'int',
    default: 3600,
    min: 1,
    max: 30 * 24 * 3600,
    meaning: 'How long finished jobs stay in Redis for inspection (failed ones at least a day).',
  },
} as const satisfies Record<string, EnvVarSpec>;
