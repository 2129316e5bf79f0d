import { Counter, Registry } from 'prom-client';

/**
 * What engines count, in a registry of their own: the worker serves it on its metrics port
 * (`WORKER_METRICS_PORT`). Engines only count; they never serve.
 */
export const engineMetrics = new Registry();

/**
 * Requests llama-server failed with its prompt cache on and answered when sent again without it
 * (`cache_prompt: false`), by deployment and by what llama-server said.
 */
export const uncachedRetries = new Counter({
  name: 'conveyor_llama_server_uncached_retries_total',
  help: 'Requests llama-server failed with its prompt cache on and that were sent again without it.',
  labelNames: ['deployment', 'reason'] as const,
  registers: [engineMetrics],
});
