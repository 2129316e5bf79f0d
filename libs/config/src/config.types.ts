export type LogLevel = 'error' | 'warn' | 'log' | 'debug' | 'verbose';

/** One served model. `model` is a generated preset name, a GGUF path, or an `hf:` URI. */
export interface DeploymentConfig {
  id: string;
  model: string;
  /** Tokens of context per sequence. */
  contextSize: number;
  /** Sequences in the worker's context, and so the jobs it runs at once. */
  parallel: number;
  /** CPU threads for the worker's context. */
  threads: number;
}

export interface PlatformConfig {
  redis: { url: string; prefix: string };
  api: { host: string; port: number; bodyLimitBytes: number; requestTimeoutMs: number };
  modelsDir: string;
  logLevel: LogLevel;
  deployments: DeploymentConfig[];
}
