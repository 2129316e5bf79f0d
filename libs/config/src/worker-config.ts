import { resolve } from 'node:path';
import type { PlatformConfig } from './config.types.js';
import type { EnvReader } from './env/env-reader.js';

/** How a worker holds its jobs, and what it runs them with. */
export function readWorkerConfig(r: EnvReader): PlatformConfig['worker'] {
  const llamaServerBin = r.optionalString('LLAMA_SERVER_BIN');
  return {
    heartbeatMs: r.int('HEARTBEAT_MS'),
    lockMs: r.int('WORKER_LOCK_MS'),
    stalledIntervalMs: r.int('WORKER_STALLED_INTERVAL_MS'),
    maxStalls: r.int('WORKER_MAX_STALLS'),
    shutdownGraceMs: r.int('WORKER_SHUTDOWN_GRACE_MS'),
    allowCpuFallback: r.bool('ALLOW_CPU_FALLBACK'),
    llamaServerBin: llamaServerBin ? resolve(llamaServerBin) : null,
  };
}
