export type LogLevel = 'error' | 'warn' | 'log' | 'debug' | 'verbose';
export type Pool = 'cpu' | 'gpu';
export type AuthMode = 'private' | 'public';

/** Request fields a deployment fills in when a request leaves them unset; the request's own value wins. */
export interface SamplingDefaults {
  temperature?: number;
  top_p?: number;
  top_k?: number;
  min_p?: number;
  repetition_penalty?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  max_tokens?: number;
}

/** The org/app path under which a deployment is also served (`/<org>/<app>/v1/...`). */
export interface AppAlias {
  org: string;
  app: string;
}

/** One served model. `model` is a generated preset name, a GGUF path, or an `hf:` URI. */
export interface DeploymentConfig {
  id: string;
  model: string;
  pool: Pool;
  /** Tokens of context per sequence. */
  contextSize: number;
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
  /** What the deployment serves: chat and text completions, or embeddings (`/v1/embeddings`) only. */
  task: DeploymentTask;
  /**
   * Thinking models: split the thought segment (`<think>…</think>`) out of replies as `reasoning_content`.
   * Off: it stays in the content.
   */
  reasoningParser: ReasoningParser | null;
}

export type DeploymentTask = 'generate' | 'embeddings';
export type FlashAttention = 'auto' | 'on' | 'off';
/** `think`: the segment between `<think>` and `</think>` (DeepSeek-R1, Qwen3 and similar templates). */
export type ReasoningParser = 'think';

export interface ApiKeyConfig {
  name: string;
  /** Hex SHA-256 of the key; the key itself is never kept. */
  sha256: string;
  rateLimit?: { requests: number; perSeconds: number };
}

export interface PlatformConfig {
  redis: {
    url: string;
    prefix: string;
    /** How long a reply stream outlives its last event (the window for resuming a stream). */
    replyTtlMs: number;
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
    /** On SIGTERM, how long open replies may take to finish before they end with an error event. */
    shutdownGraceMs: number;
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
    /** Serve GPU-pool deployments on the CPU when no GPU is usable, instead of refusing to start. */
    allowCpuFallback: boolean;
  };
  batch: {
    /** Where uploaded files and batch results are kept (the local file store). */
    dataDir: string;
    maxLines: number;
    maxFileBytes: number;
    /** Lines of one batch queued or running at once; the rest wait in the file, not in Redis. */
    inflightPerBatch: number;
    /** How often the batch runner collects results and tops queues up. */
    tickMs: number;
  };
  modelsDir: string;
  logLevel: LogLevel;
  /** json: one JSON object per line (pino); text: Nest's readable console format. */
  logFormat: 'json' | 'text';
  /** Include prompts in logs; off unless explicitly enabled. */
  logPrompts: boolean;
  deployments: DeploymentConfig[];
  /** No keys: authentication is off, as on local servers. */
  apiKeys: ApiKeyConfig[];
  /** Hex SHA-256 of the key that opens the queue dashboard; null: no dashboard is served. */
  adminKeySha256: string | null;
}
