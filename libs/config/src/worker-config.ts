import { freemem, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { PlatformConfig } from './config.types.js';
import { EnvReader } from './env/env-reader.js';

/** CONVEYOR_BENCH_CACHE: where `npm run build:llama-server` (scripts/llama-server-build.mjs) caches its build. */
const readLlamaServerCache = (r: EnvReader): string =>
  r.optionalString('CONVEYOR_BENCH_CACHE') ?? join(homedir(), '.cache', 'conveyor-bench');

/** The llama-server build cache of an environment, for the tests that run llama-server outside a worker. */
export const llamaServerCache = (env: Record<string, string | undefined> = process.env): string =>
  readLlamaServerCache(new EnvReader(env));

/** How a worker holds its jobs, and what it runs them with. */
export function readWorkerConfig(r: EnvReader): PlatformConfig['worker'] {
  const llamaServerBin = r.optionalString('LLAMA_SERVER_BIN');
  return {
    heartbeatMs: r.int('HEARTBEAT_MS'),
    lockMs: r.int('WORKER_LOCK_MS'),
    stalledIntervalMs: r.int('WORKER_STALLED_INTERVAL_MS'),
    maxStalls: r.int('WORKER_MAX_STALLS'),
    shutdownGraceMs: r.int('WORKER_SHUTDOWN_GRACE_MS'),
    testStallMs: r.int('WORKER_TEST_STALL_MS'),
    metricsPort: r.int('WORKER_METRICS_PORT'),
    allowCpuFallback: r.bool('ALLOW_CPU_FALLBACK'),
    llamaServerBin: llamaServerBin ? resolve(llamaServerBin) : null,
    llamaServerCache: readLlamaServerCache(r),
    threadpoolSize: r.optionalString('UV_THREADPOOL_SIZE') ?? null,
    memoryBudgetMb: r.int('WORKER_MEMORY_BUDGET_MB') || Math.floor((0.8 * freemem()) / 2 ** 20),
    demandPollMs: r.int('MODEL_DEMAND_POLL_MS'),
  };
}
