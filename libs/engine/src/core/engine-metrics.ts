import { Registry } from 'prom-client';
import { LLAMA_SERVER_UNCACHED_RETRIES, counterOf } from '@conveyor/metrics';

/**
 * What engines count, in a registry of their own: the worker serves it on its metrics port
 * (`WORKER_METRICS_PORT`). Engines only count; they never serve. Declared in `@conveyor/metrics`, which
 * docs/metrics.md is generated from.
 */
export const engineMetrics = new Registry();

/**
 * Requests llama-server failed with its prompt cache on and answered when sent again without it
 * (`cache_prompt: false`), by deployment and by what llama-server said.
 */
export const uncachedRetries = counterOf(LLAMA_SERVER_UNCACHED_RETRIES, engineMetrics);
