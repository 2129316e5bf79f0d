// One file past 300 lines: the configuration's types, one contract every part of the platform reads, so
// each setting is typed once, beside the others it is read with.

import { SERVICE_TIERS, type ServiceTier } from '@conveyor/openai';
import type { SamplingPreset } from '@conveyor/protocol';

export type LogLevel = 'error' | 'warn' | 'log' | 'debug' | 'verbose';
export type Pool = 'cpu' | 'gpu';
export type AuthMode = 'private' | 'public';

/** Request fields a deployment fills in when a request leaves them unset; the request's own value wins. */
export type SamplingDefaults = SamplingPreset;

/** The org/app path under which a deployment is also served (`/<org>/<app>/v1/...`). */
export interface AppAlias {
  org: string;
  app: string;
}

/**
 * One served model. `model` is a generated preset name, a GGUF path, or an `hf:` URI; with an `openai`
 * engine, the name the upstream serves it under.
 */
export interface DeploymentConfig {
  id: string;
  model: string;
  pool: Pool;
  /** Tokens of context per sequence. */
  contextSize: number;
  /**
   * The most characters one token of the model can stand for: a prompt longer than
   * `contextSize` times this cannot fit, and is refused before it is queued or tokenized.
   */
  promptCharsPerToken: number;
  /** Sequences in a worker's context, and so the jobs one worker runs at once. */
  parallel: number;
  /** CPU threads for the worker's context. */
  threads: number;
  /**
   * llama.cpp's flash attention: `auto` (llama.cpp's own default, as llama-server has it: on where the
   * device supports it, which every CPU does), `on` or `off`.
   */
  flashAttention: FlashAttention;
  defaults: SamplingDefaults;
  alias?: AppAlias;
  auth: AuthMode;
  /** How a worker reuses what its sequences already computed; see PromptCacheMode. */
  promptCache: PromptCacheMode;
  /**
   * MiB of host memory for prefixes pushed out of a worker's sequences (llama-server's `--cache-ram`); 0:
   * none; null: the default, 8192 but no more than a quarter of the memory free where the worker starts.
   */
  promptCacheRam: number | null;
  /** What the deployment serves: chat and text completions, or embeddings (`/v1/embeddings`) only. */
  task: DeploymentTask;
  /**
   * Thinking models: split the thought segment (`<think>…</think>`) out of replies as `reasoning_content`.
   * Off: it stays in the content.
   */
  reasoningParser: ReasoningParser | null;
  /** What runs the model in the worker; see EngineConfig. */
  engine: EngineConfig;
  /** Whether requests may carry images (`image_url` parts): the engine has a vision projector. */
  vision: boolean;
  /** A request's deadline, in milliseconds from its receipt, when nothing shorter applies; null: none. */
  deadlineMs: number | null;
  /**
   * When a worker of its pool holds its model: `pinned`, loaded before the worker takes any job and never
   * unloaded; `on-demand`, loaded by one worker with room in its memory budget when its queue has work
   * and no live worker serves it, and unloaded (least recently used first) when another needs the room.
   */
  load: ModelLoad;
  /** MiB its model and contexts take in a worker's memory budget; null: estimated from the model file. */
  memoryMb: number | null;
  /**
   * For an on-demand deployment: workers that keep it loaded with no work waiting. Below it, a worker
   * with room loads it; at or below it, none unloads it for another model. 0: loaded only on demand.
   */
  minWarm: number;
  /**
   * The LoRA adapter its contexts apply (scaled by `scale`), for a deployment made of another's `adapters`
   * entry: the same model, under the adapter's name, with a queue and contexts of its own, so requests
   * for different adapters never share a decode batch. Null for a deployment of the model as it is.
   */
  lora: LoraAdapter | null;
}

export interface LoraAdapter {
  /** A `.gguf` adapter path, an `hf:` URI, or a generated adapter preset. */
  path: string;
  scale: number;
  /** The deployment whose model it adapts. */
  base: string;
}

/** See DeploymentConfig.load. */
export type ModelLoad = 'pinned' | 'on-demand';
export const MODEL_LOADS: readonly ModelLoad[] = ['pinned', 'on-demand'];

/**
 * What runs a deployment's model in its workers. `llama-cpp`: node-llama-cpp in the worker's process
 * (text only). `llama-server`: a llama.cpp server the worker starts as its child, on loopback, for
 * what node-llama-cpp cannot run (a vision projector). `openai`: an OpenAI-compatible server already
 * running (vLLM, SGLang, llama.cpp's server, a desktop app), driven over HTTP. `simulated`: no model at
 * all, replies of a fixed text at a configured pace, for capacity and fault tests.
 */
export type EngineConfig =
  | { kind: 'llama-cpp' }
  | {
      kind: 'llama-server';
      /** The vision projector (a GGUF path, an `hf:` URI, or a generated preset's), or null for text only. */
      mmproj: string | null;
      /** The most tokens one image may take (llama-server's --image-max-tokens); null: the projector's own. */
      imageMaxTokens: number | null;
    }
  | {
      kind: 'openai';
      /** Base URL of its OpenAI API, `/v1` included (http://127.0.0.1:8000/v1). */
      url: string;
      /** Sent as `Authorization: Bearer <key>`; null: none. */
      apiKey: string | null;
      /** The `model` the upstream is asked for; null: the deployment's model. */
      model: string | null;
    }
  | {
      kind: 'simulated';
      /** Time to first token: from the job's start to its first token, in milliseconds. */
      ttftMs: number;
      /** Time per output token after the first, in milliseconds: one round of every running reply. */
      tpotMs: number;
      /** Tokens of a reply whose request sets no max_tokens (fewer when a stop string or the context ends it). */
      outputTokens: number;
      /** The reply's text, one word (with its leading space) per token, repeated as long as the reply runs. */
      text: string;
    };

export const DEPLOYMENT_TASKS = ['generate', 'embeddings', 'rerank'] as const;
export type DeploymentTask = (typeof DEPLOYMENT_TASKS)[number];
export type FlashAttention = 'auto' | 'on' | 'off';
/** `think`: the segment between `<think>` and `</think>` (DeepSeek-R1, Qwen3 and similar templates). */
export type ReasoningParser = 'think';

/**
 * The queue's priority bands a request may ask for, as OpenAI's `service_tier` names them: `priority` ahead
 * of `default` ahead of `flex` (and batch lines); `auto` is `default`.
 */
export { SERVICE_TIERS, type ServiceTier };
/** The tiers a key may use when its config names none: all but `priority`. */
export const DEFAULT_KEY_TIERS: readonly ServiceTier[] = ['auto', 'default', 'flex'];

/** Tokens (input and output together) a key may use per minute and per day. */
export interface TokenLimitConfig {
  perMinute?: number;
  perDay?: number;
}

/** Where a key's batch events are posted, signed as Standard Webhooks with `secret` (`whsec_` + base64). */
export interface WebhookConfig {
  url: string;
  secret: string;
}

export interface ApiKeyConfig {
  name: string;
  /** Hex SHA-256 of the key; the key itself is never kept. */
  sha256: string;
  rateLimit?: { requests: number; perSeconds: number };
  /** Token quotas beside the request rate; none: no token limit. */
  tokenLimit?: TokenLimitConfig;
  /** The service tiers the key may ask for; none: DEFAULT_KEY_TIERS. */
  tiers?: ServiceTier[];
  /** The key's weight in fair sharing of the fleet against other keys (default 1). */
  weight?: number;
  /** A deadline for the key's requests, in milliseconds; the shortest of it, the request's and the deployment's applies. */
  deadlineMs?: number;
  /** Where its batches' events go; none: no webhook. */
  webhook?: WebhookConfig;
}

/**
 * The host names requests may address the API by (the `Host` header, port ignored), or `*` for any.
 * Names are in `hostName`'s form: lower case, IPv6 in brackets.
 */
export type AllowedHosts = '*' | readonly string[];

/**
 * Where uploaded files and batch results are kept. `local`: a folder on this host's disk, the
 * embedded default, for one API replica. `s3`: a bucket of S3-compatible object storage that every
 * replica shares; credentials come from the AWS SDK's own chain (AWS_ACCESS_KEY_ID, ...), never from here.
 */
export type FileStoreConfig =
  | { kind: 'local'; dir: string }
  | {
      kind: 's3';
      bucket: string;
      /** Key prefix inside the bucket, without a trailing slash; `''` is the bucket's root. */
      prefix: string;
      /** A store other than AWS S3 (MinIO, Ceph RGW, R2); null: AWS's own endpoints. */
      endpoint: string | null;
      /** null: left to the SDK (its profile files). */
      region: string | null;
      /** `http://host/bucket/key` instead of `http://bucket.host/key`, as MinIO and Ceph RGW usually need. */
      forcePathStyle: boolean;
    };

/** A Redis node's address: a sentinel, or a cluster's seed node. */
export interface SentinelAddress {
  host: string;
  port: number;
}

/**
 * Reaching Redis through Sentinel: the sentinels name the primary, and every connection asks them
 * again after a failover. The data nodes' password, database and TLS still come from REDIS_URL.
 */
export interface SentinelConfig {
  sentinels: SentinelAddress[];
  /** The primary's name as the sentinels know it (their `sentinel monitor <name> ...`). */
  name: string;
  /** The sentinels' own password (their `requirepass`), which may differ from the data nodes'. */
  password: string | null;
}

/**
 * Reaching a Redis Cluster: the clients learn the cluster's shards from these seed nodes and follow
 * its slots as they move. The data nodes' password and TLS still come from REDIS_URL.
 */
export interface ClusterConfig {
  /** Seed nodes; any reachable one tells the clients about the rest. */
  nodes: SentinelAddress[];
}

/**
 * The prompt cache: each reply's tokens stay in its sequence for a later request to reuse.
 * `exact` (the default): only whole 256-token chunks computed as a prompt, so a reply is token for
 * token what it would be without the cache; `full`: the longest common prefix, the last reply
 * included, as llama.cpp's server reuses its slots; `off`: every prompt is computed from its first token.
 */
export type PromptCacheMode = 'exact' | 'full' | 'off';

/** A model name clients send (exact, or a pattern with `*` and `?`) and the deployment it reaches. */
export interface ModelAliasConfig {
  name: string;
  /** A deployment's id. */
  deployment: string;
}

/** The names clients may send besides the deployments' ids: the file's aliases, then MODEL_ALIASES'. */
export interface ModelNamesConfig {
  /** In the order declared: the first pattern that matches a name wins; an exact name wins over every pattern. */
  aliases: ModelAliasConfig[];
  /** The deployment any other name reaches; null: another name gets 404 model_not_found. */
  defaultDeployment: string | null;
}

/** Where and how spans are exported (OTLP over HTTP), as the OpenTelemetry variables say. */
export interface TracingConfig {
  /** The collector's traces URL, its `/v1/traces` included. */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  /** `service.name`; null: the process's own (`conveyor-api`, `conveyor-worker`). */
  serviceName: string | null;
  /** Prompts and outputs in the generation spans; off unless explicitly enabled. Keys never. */
  prompts: boolean;
}

export interface PlatformConfig {
  redis: {
    /** A single Redis; with `sentinel`, only its password, database and scheme (rediss: TLS) are used. */
    url: string;
    /** Set: the primary is found through Sentinel and followed across failovers. */
    sentinel: SentinelConfig | null;
    /** Set: Redis is a cluster, reached through these seeds; keys that scripts share carry hash tags. */
    cluster: ClusterConfig | null;
    prefix: string;
    /** How long a reply stream outlives its last event (the window for resuming a stream). */
    replyTtlMs: number;
    /** How long a stored Responses API response is kept after its last change. */
    responseTtlMs: number;
    /** How long finished jobs are kept in BullMQ for inspection. */
    jobRetentionSeconds: number;
  };
  api: {
    host: string;
    port: number;
    bodyLimitBytes: number;
    requestTimeoutMs: number;
    /** How long a request may wait for a worker to take it before it fails with 503. */
    queueTimeoutMs: number;
    /** Requests waiting in a deployment's queue beyond which new ones get 429. */
    maxQueueDepth: number;
    /** Requests waiting in a deployment's queue beyond which new `flex` ones get 429 (at most maxQueueDepth). */
    flexQueueDepth: number;
    /** Deployments shared between API keys by their weights (batch lines in flight, the queue's last places). */
    fairShares: boolean;
    /** On SIGTERM, how long open replies may take to finish before they end with an error event. */
    shutdownGraceMs: number;
    /** Host names the API answers to; another Host gets 403, so a DNS-rebinding page cannot reach it. */
    allowedHosts: AllowedHosts;
    /** How long a client may take to send a request's headers, and then its body. */
    bodyTimeoutMs: number;
    /** How long a file upload (`POST /v1/files`) may take to arrive, headers and body. */
    uploadTimeoutMs: number;
    /** What the images of one request are held to, before anything is queued. */
    images: {
      /** Bytes of one image, decoded; its base64 (4/3 as long) must fit in the body limit. */
      maxBytes: number;
      /** Pixels of one image (width × height): what a worker's decoder must hold, 4 bytes each. */
      maxPixels: number;
      /** Images in one request. */
      maxCount: number;
    };
  };
  worker: {
    heartbeatMs: number;
    /** BullMQ job lock: a worker that stops renewing it (killed, frozen) loses the job after this long. */
    lockMs: number;
    /** How often workers look for jobs whose lock has lapsed, to run them again. */
    stalledIntervalMs: number;
    /** A job that stalls (kills its worker) more often than this fails instead of being retried. */
    maxStalls: number;
    /** On SIGTERM, how long running jobs may take to finish before they are handed back to the queue. */
    shutdownGraceMs: number;
    /** For tests: how long SIGUSR2 blocks the worker's main thread (0: no such handler). */
    testStallMs: number;
    /** Where the worker serves its Prometheus metrics; 0: nowhere. */
    metricsPort: number;
    /** Serve GPU-pool deployments on the CPU when no GPU is usable, instead of refusing to start. */
    allowCpuFallback: boolean;
    /**
     * The llama-server binary `llama-server` deployments run (LLAMA_SERVER_BIN); null: the one
     * `npm run build:llama-server` built and cached.
     */
    llamaServerBin: string | null;
    /** Where `npm run build:llama-server` caches its build (CONVEYOR_BENCH_CACHE), and so where to look for it. */
    llamaServerCache: string;
    /**
     * UV_THREADPOOL_SIZE as the worker was started with it: libuv read it before any code ran, so only
     * the launcher can set it. Null: libuv's default of 4 threads.
     */
    threadpoolSize: string | null;
    /**
     * MiB of models and contexts a worker may hold (WORKER_MEMORY_BUDGET_MB): on-demand deployments are
     * loaded within it, pinned ones count against it. Resolved at start-up: 0 there means 80% of the
     * memory free where the worker starts.
     */
    memoryBudgetMb: number;
    /** How often a worker looks for on-demand deployments with work waiting and no worker (MODEL_DEMAND_POLL_MS). */
    demandPollMs: number;
  };
  batch: {
    /** Where the local file store keeps uploaded files and batch results (under `files/`). */
    dataDir: string;
    maxLines: number;
    maxFileBytes: number;
    /** A message batch's own limits, Anthropic's by default: its body is not an uploaded file. */
    messageBatch: { maxRequests: number; maxBytes: number };
    /** Lines of one batch queued or running at once; the rest wait in the file, not in Redis. */
    inflightPerBatch: number;
    /** How often the batch runner collects results and tops queues up. */
    tickMs: number;
    /** How long a replica's hold on a batch lasts unrenewed: another replica takes the batch over after this. */
    leaseMs: number;
    /** How a batch event is posted to its owner's webhook: each attempt's limit, how many, the first retry's wait (doubling). */
    webhook: { timeoutMs: number; attempts: number; backoffMs: number };
    /** The shortest expiry a batch's output files (or an upload) may be given, in seconds: 3600 but in tests. */
    outputExpiryMinSeconds: number;
    /** How often each replica removes expired files from the file store. */
    expirySweepMs: number;
  };
  fileStore: FileStoreConfig;
  modelsDir: string;
  logLevel: LogLevel;
  /** json: one JSON object per line (pino); text: Nest's readable console format. */
  logFormat: 'json' | 'text';
  /** Include prompts in logs; off unless explicitly enabled. */
  logPrompts: boolean;
  /** OpenTelemetry tracing; null: off, and no SDK is started. */
  tracing: TracingConfig | null;
  deployments: DeploymentConfig[];
  /** Aliases of the deployments, for clients that hard-code model names. */
  modelNames: ModelNamesConfig;
  /** No keys: authentication is off, as on local servers. */
  apiKeys: ApiKeyConfig[];
  /** Hex SHA-256 of the key that opens the queue dashboard; null: no dashboard is served. */
  adminKeySha256: string | null;
}
